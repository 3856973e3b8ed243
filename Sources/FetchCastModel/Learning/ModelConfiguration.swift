/// The model's tunable constants. Defaults were chosen on half of the development users
/// (see docs/model.md) and are documented there with the reasoning behind each.
public struct ModelConfiguration: Sendable, Hashable, Codable {
    /// The freshness window τ, seconds: a launch is a *session start* (needy) when the app was
    /// not launched in the τ before it, and the model predicts session starts within τ.
    public var tau: Double = 1800
    /// Half-life of evidence, days: an event this old counts half as much as one now.
    public var halfLifeDays: Double = 21
    /// A gap between two events of a device longer than this (hours) means the device was not
    /// observed in between: it is not evidence of "no launch".
    public var exposureGapHours: Double = 24
    /// Weight of each neighbouring hour when smoothing the hour-of-week counts.
    public var neighbourHourWeight: Double = 0.5
    /// Weight of the same hour on the other days of the same kind (weekday/weekend), shared.
    public var sameHourOtherDaysWeight: Double = 1.0
    /// Pseudo-hours of exposure with which the device's own rate is shrunk toward the prior.
    public var priorHours: Double = 6
    /// Pseudo-trials with which a device's co-usage probability is shrunk toward the prior.
    public var coUsagePriorTrials: Double = 8
    /// An app not opened for at least this many hours has its session chance read from its
    /// habit as well (``DeviceModel/habit(app:at:)``): sooner after a use, its launch gaps know
    /// better whether it comes back (docs/model.md, "Habits").
    public var habitIdleHours: Double = 2
    /// The fewest days with a session in a window of the day for the scheduler to look ahead of
    /// it (``SchedulerConfiguration/anticipates``). Two, with ``habitMinimumObservedDays``, so a
    /// new device's habit is looked ahead of from its third day (docs/model.md, "A habit's first
    /// days": on the generated archetypes 0.350 → 0.362 at a cap of 24; the development trace's
    /// heavy users within ±0.005 at caps 6–96, no direction).
    public var habitMinimumDays: Int = 2
    /// The fewest days of use an app's habit log must cover (``DeviceModel/habit(app:at:)``, both
    /// kinds of day) for its habit to give the session chance of an idle app: an app used so
    /// often that the log's latest sessions cover less is left to its launch gaps. The habit's
    /// pseudo-days (``DeviceModel/habitPriorDays``) keep a chance read from few days modest.
    public var habitMinimumObservedDays: Int = 2
    /// The most sessions a day, on average over the days its habit log covers, for an app to
    /// have a habit: one opened more often is used at all hours, reacted to after launches and
    /// valued by its gaps. Chosen on the development trace's training users and the generated
    /// archetypes (seed 1): looks ahead of apps with up to 1, 1.5, 2, 2.5, 3 and 5 sessions a day
    /// gave 0.343, 0.342, 0.340, 0.337, 0.337 and 0.332 on the training users at cap 24 (0.343
    /// without looks ahead) for 170, 170, 173, 178, 184 and 209 J a device-day (170 without), and
    /// 0.321, 0.338, 0.345, 0.345 on the archetypes (0.335 with no limit). Two a day keeps a
    /// habit of twice a day (the chat at 12:30 and 21:10) at a cost of 0.003 on the
    /// training users (docs/model.md, "Habits").
    public var habitMaximumDailySessions: Double = 2

    /// The defaults.
    public init() {}

    /// Defaults with another τ.
    public init(tau: Double) { self.tau = tau }

    /// The decay rate per second, ln 2 / half-life.
    public var decayPerSecond: Double { 0.693_147_180_559_945_3 / (halfLifeDays * 86_400) }
}
