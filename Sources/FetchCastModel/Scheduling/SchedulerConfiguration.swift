/// The scheduler's constants; see docs/model.md for why each default is what it is.
public struct SchedulerConfiguration: Sendable, Hashable, Codable {
    /// Fetches per device per local day (the cap is ⌊budget⌋).
    public var budget: Double = 24
    /// Least time between two fetches of one app, seconds (iOS's minimum is 15 minutes).
    public var minimumInterval: Double = 900
    /// No fetch before this instant (Unix seconds), like `earliestBeginDate`.
    public var notBefore: Double?
    /// How often the policy looks ahead without a launch or an expiry to react to, seconds;
    /// `nil` (the default): only at launches, expiries and retries. Periodic looks spent the
    /// budget on low-value moments on the tuning users (docs/model.md).
    public var checkInterval: Double?
    /// Exponent on the trigger app's co-usage lift (odds scale) after a launch.
    public var coUsageLiftWeight: Double = 1.5
    /// The least chance that a fetch makes a session fresh for it to be worth a radio wakeup.
    public var minimumValue: Double = 0.05
    /// The least value a plan takes a fetch at (``FetchPlanner``). A plan has no pacer to tell it
    /// how many better moments a day still holds (launches to react to are not known ahead),
    /// so it needs a higher floor than the live policy: 0.15 was best of 0.05–0.3 for plans
    /// asked every hour and on each event on the tuning users (docs/model.md).
    public var planMinimumValue: Double = 0.15
    /// A fetch joins a wakeup that is happening anyway when its value is at least this fraction
    /// of the current threshold.
    public var coalesceFraction: Double = 0.75
    /// First retry delay after a failed fetch, seconds (doubles per failure, at most 1 hour).
    public var retryDelay: Double = 60
    /// Weight of yesterday's opportunity counts relative to today's when pacing the budget.
    public var pacingMemory: Double = 0.9

    /// The defaults.
    public init() {}

    /// Defaults with another budget.
    public init(budget: Double) { self.budget = budget }

    /// ⌊budget⌋.
    public var dailyCap: Int { Int(budget.rounded(.down)) }
}
