import FetchCastCore
import Foundation

/// What fetching one app at one moment is worth, and why: the one valuation behind both of the
/// scheduler's drivers, the live ``LearnedPolicy`` and the plans of ``FetchPlanner``.
struct FetchValuation: Sendable, Hashable {
    /// P(a session of the app starts within τ) × P(new data) × the share of the τ window not
    /// already fresh: the chance that this fetch makes a session fresh.
    var value: Double
    /// P(a session of the app starts within τ after the moment).
    var launchProbability: Double
    /// P(the fetch finds new data).
    var newDataProbability: Double
    /// Why: the session chance's source.
    var reason: FetchReason

    static let worthless = FetchValuation(value: 0, launchProbability: 0, newDataProbability: 0, reason: .likelyLaunch(probability: 0))
}

/// A launch a fetch may react to: the latest launch, when it is at most 2 × ``DeviceModel/triggerDelay``
/// before the moment valued.
struct FetchTrigger: Sendable, Hashable {
    /// When the launch happened.
    var time: Double
    /// The app launched.
    var app: Int32

    /// Creates a trigger.
    init(time: Double, app: Int32) {
        self.time = time
        self.app = app
    }

    /// Whether a fetch of `app` at `t` reacts to this launch.
    @inline(__always)
    func applies(to app: Int32, at t: Double) -> Bool {
        self.app != app && t >= time && t - time <= 2 * DeviceModel.triggerDelay
    }
}

extension DeviceModel {
    /// The value of fetching the outlook's app at `t`, known at `o.now` (≤ `t`):
    ///
    ///     value = P(a session starts within τ after t) × P(new data at t) × uncovered share
    ///
    /// The session chance is the learned response to a launch when `trigger` applies (it
    /// conditions on the app's time since last use, on whether the launch starts a burst, and on
    /// the trigger app's co-usage lift); otherwise the return chance from the app's launch gaps
    /// (given no launch until `t`), modulated by the hour-of-week rate, within τ of `o.now`; beyond
    /// it (a plan's later moments), or when the gaps say nothing of so long a silence, the
    /// hour-of-week rate scaled by the app's activity after its present silence
    /// (``AppOutlook/activity``); for an app never launched, the hour-of-week rate alone. When the
    /// app has not been opened for ``ModelConfiguration/habitIdleHours``, its habit's chance
    /// (``habitChance(_:at:base:)``, which starts from that chance) replaces it once its log covers enough days. The uncovered share is the part of `(t, t + τ]` that a
    /// refresh at `refreshed` does not already keep fresh.
    ///
    /// - Parameters:
    ///   - newData: P(new data at `t`); `nil`: ``newDataProbability(app:at:since:now:)`` since `refreshed`.
    /// - Complexity: O(gap bins) plus O(1) hour slots.
    func fetchValue(
        app: Int32, at t: Double, now: Double, refreshed: Double?, trigger: FetchTrigger?, prior: DevicePrior,
        liftWeight: Double, averageRate: Double? = nil
    ) -> FetchValuation {
        fetchValue(outlook(app: app, now: now, prior: prior, averageRate: averageRate), at: t, refreshed: refreshed,
                   newData: nil, trigger: trigger, prior: prior, liftWeight: liftWeight)
    }

    func fetchValue(
        _ o: AppOutlook, at t: Double, refreshed: Double?, newData: Double?, trigger: FetchTrigger?, prior: DevicePrior,
        liftWeight: Double
    ) -> FetchValuation {
        let tau = configuration.tau
        let coveredUntil = (refreshed ?? -.infinity) + tau
        let uncovered = max(0, t + tau - max(t, coveredUntil)) / tau
        if uncovered <= 0 { return .worthless }
        // The return chance conditions on no launch of the app until t: known for the next τ,
        // a guess beyond it (a plan made hours ahead cannot know of launches in between).
        let known = t - o.now <= tau ? returnProbability(o, from: t, prior: prior) : nil
        func hourly() -> Double { hourlyChance(o, at: t, prior: prior) }
        var session = known ?? hourly()
        var reason = known != nil ? FetchReason.returnVisit(probability: session) : .likelyLaunch(probability: session)
        if let trigger, trigger.applies(to: o.app, at: t) {
            session = responseProbability(
                app: o.app, at: t, after: trigger.app, triggerTime: trigger.time, now: o.now, prior: prior, liftWeight: liftWeight)
            reason = .coUsage(after: trigger.app, probability: session)
        } else if let habit = habitChance(o, at: t, base: session) {
            // A habit says more than the gaps and the hours when the app has been idle a while.
            session = habit
            reason = .habit(probability: habit)
        }
        let fresh = newData ?? newDataProbability(app: o.app, at: t, since: refreshed, now: o.now)
        return FetchValuation(value: session * fresh * uncovered, launchProbability: session, newDataProbability: fresh, reason: reason)
    }

    /// The chance of a session of the outlook's app in `(t, t + τ]` from its hour-of-week rates,
    /// times its activity after its present silence.
    func hourlyChance(_ o: AppOutlook, at t: Double, prior: DevicePrior) -> Double {
        var expected = 0.0
        HourOfWeek.spread(from: t, to: t + configuration.tau, offset: lastOffset) { slot, seconds in
            expected += rate(o, slot: slot, prior: prior) * seconds / 3600
        }
        // An app silent for days is not expected at its usual hours.
        return (1 - exp(-expected)) * o.activity
    }

    /// The chance of a session of `app` in `(t, t + τ]` as a look at `t` values it without a
    /// trigger, known at `t`: from the gaps and the hours (`base`), and from the habit clock
    /// where it replaces them (`habit`, `nil` where it does not: the app was used within
    /// ``ModelConfiguration/habitIdleHours`` or its log does not speak). What
    /// ``HabitLikelihood`` scores.
    package func sessionChances(app: Int32, at t: Double, prior: DevicePrior) -> (base: Double, habit: Double?) {
        let o = outlook(app: app, now: t, prior: prior)
        let known = returnProbability(o, from: t, prior: prior)
        let base = known ?? hourlyChance(o, at: t, prior: prior)
        return (base, habitChance(o, at: t, base: base))
    }

    /// The latest launch, as a trigger for fetches at `t` that react to it (`nil` when it is
    /// too long before `t`).
    func trigger(at t: Double) -> FetchTrigger? {
        guard let last = recent.last(where: { $0.time <= t }) else { return nil }
        let trigger = FetchTrigger(time: last.time, app: last.app)
        return t - trigger.time <= 2 * Self.triggerDelay ? trigger : nil
    }
}
