import FetchCastCore

/// One event as a device's fetch policy sees it: app launches, fetch results already in the
/// trace, and content publications (for this device or for every device).
public struct DeviceEvent: Sendable, Hashable {
    /// Unix seconds (UTC).
    public var time: Double
    /// The device's UTC offset at that instant, in seconds.
    public var utcOffsetSeconds: Int32
    /// The app's symbol (dense small integer; names live in the caller's symbol table).
    public var app: Int32
    /// What happened.
    public var kind: EventKind
    /// The fetch outcome for `fetch` events.
    public var result: FetchResult?

    /// Creates an event.
    public init(time: Double, utcOffsetSeconds: Int32 = 0, app: Int32, kind: EventKind, result: FetchResult? = nil) {
        self.time = time
        self.utcOffsetSeconds = utcOffsetSeconds
        self.app = app
        self.kind = kind
        self.result = result
    }
}

/// Why a fetch was made: kept small so replays can record one per fetch cheaply.
///
/// The model's own reasons, and ``policy(_:)`` for a policy outside the model (the replay's
/// baselines), which says why in its own words.
public enum FetchReason: Sendable, Hashable {
    /// Made by a policy outside the model (a baseline of the replay): its own description, a
    /// string literal so that recording one per fetch copies no storage.
    case policy(String)
    /// Ahead of a likely launch, from the hour-of-week likelihood.
    case likelyLaunch(probability: Double)
    /// Ahead of the app's return, from how long it usually stays unused (its launch gaps),
    /// modulated by the hour of the week.
    case returnVisit(probability: Double)
    /// Ahead of a habit: the app was opened in this window of the day on most recent days of
    /// the same day of the week, or of the same kind (``DeviceModel/habitDays(app:at:)``).
    case habit(probability: Double)
    /// Ahead of the device's first use after a silence: on recent days of the same kind still
    /// silent at this time of day, the device was often first used within τ, with a launch of
    /// the app (``DeviceModel/pickupWindow(app:at:)``).
    case pickup(probability: Double)
    /// Right after a launch of another app that is often followed by this one.
    case coUsage(after: Int32, probability: Double)
    /// Joined another app's radio wakeup.
    case coalesced(with: Int32)
    /// Retry after a failed fetch.
    case retry

    /// A short description; `name` turns app symbols into ids.
    public func describe(_ name: (Int32) -> String) -> String {
        switch self {
        case .policy(let text): return text
        case .likelyLaunch(let p): return "likely launch (p=\(Self.fixed2(p)))"
        case .returnVisit(let p): return "likely return (p=\(Self.fixed2(p)))"
        case .habit(let p): return "habit (p=\(Self.fixed2(p)))"
        case .pickup(let p): return "first pickup (p=\(Self.fixed2(p)))"
        case .coUsage(let after, let p): return "after \(name(after)) (p=\(Self.fixed2(p)))"
        case .coalesced(let with): return "coalesced with \(name(with))"
        case .retry: return "retry after failure"
        }
    }

    private static func fixed2(_ p: Double) -> String {
        let v = max(0, min(100, Int(saturating: (p * 100).rounded())))
        return v == 100 ? "1.00" : "0." + (v < 10 ? "0" : "") + String(v)
    }
}

/// A fetch a policy decides to make now.
public struct PlannedFetch: Sendable, Hashable {
    /// The app to fetch for.
    public var app: Int32
    /// Why.
    public var reason: FetchReason

    /// Creates a planned fetch.
    public init(app: Int32, reason: FetchReason) {
        self.app = app
        self.reason = reason
    }
}

/// A fetch a policy weighed at a wakeup, taken or not: what `evaluate --detail` writes to
/// `decisions.csv.gz`, so anyone can see why a moment was (not) worth a fetch.
public struct ConsideredFetch: Sendable, Hashable {
    /// The app.
    public var app: Int32
    /// The policy's value of fetching it now (for `learned`: P(session within τ) × P(new data)
    /// × the share of the next τ not already fresh).
    public var value: Double
    /// P(a session of the app starts within τ).
    public var launchProbability: Double
    /// P(the fetch finds new data).
    public var newDataProbability: Double
    /// The value a fetch had to reach at this moment (the budget pacer's bar); infinite when
    /// the day's cap was spent.
    public var bar: Double
    /// Whether the policy asked for this fetch (the engine may still refuse it over the cap).
    public var fetched: Bool

    /// Creates a record.
    public init(app: Int32, value: Double, launchProbability: Double, newDataProbability: Double, bar: Double, fetched: Bool) {
        self.app = app
        self.value = value
        self.launchProbability = launchProbability
        self.newDataProbability = newDataProbability
        self.bar = bar
        self.fetched = fetched
    }
}

/// A causal fetch policy for one device: it acts only on what it has observed.
///
/// A replay (or a live scheduler) drives it: it delivers every input event in time order with
/// ``observe(_:)``, and before delivering the events at time `t` it wakes the policy at each
/// ``nextWakeup`` that is `≤ t` (publish events at `t` are delivered before a wakeup at `t`,
/// so a fetch at `t` sees content published at `t`). A fetch at time `f` is therefore decided
/// from events strictly before `f` (publishes at `f` included); a fetch that reacts to a launch
/// comes after it.
public protocol FetchPolicy {
    /// The earliest instant (Unix seconds) at which the policy wants to act, or `nil`.
    var nextWakeup: Double? { get }
    /// Acts at `time` (the current ``nextWakeup``): appends the fetches to make now.
    /// After this call ``nextWakeup`` must be later than `time` or `nil`.
    mutating func wake(at time: Double, into fetches: inout [PlannedFetch])
    /// ``wake(at:into:)`` that also reports every fetch it weighed (taken or not). The default
    /// reports nothing.
    mutating func wake(at time: Double, into fetches: inout [PlannedFetch], considered: inout [ConsideredFetch])
    /// Observes one input event (launches, fetches and publishes; never `state` rows, which
    /// arrive through ``observeConditions(_:at:utcOffsetSeconds:)``).
    mutating func observe(_ event: DeviceEvent)
    /// Learns that the device's conditions changed at `time` (a `state` row, at the device's UTC
    /// offset `utcOffsetSeconds`): `conditions` is what holds from `time` on, unknown fields still
    /// `nil`. The default ignores it; a condition-aware policy keeps or learns from it.
    mutating func observeConditions(_ conditions: DeviceConditions, at time: Double, utcOffsetSeconds: Int32)
    /// Learns the result of one of its own fetches, made at `time`.
    mutating func didFetch(app: Int32, at time: Double, result: FetchResult)
    /// Starts (or stops) keeping the plans it asks for, for ``drainPlans(into:)``. The default
    /// does nothing: only policies that follow plans have any.
    mutating func reportPlans(_ on: Bool)
    /// Hands over the plans asked for since the last call (`evaluate --detail`'s `plans.csv.gz`).
    mutating func drainPlans(into plans: inout [MadePlan])
}

extension FetchPolicy {
    public mutating func wake(at time: Double, into fetches: inout [PlannedFetch], considered: inout [ConsideredFetch]) {
        wake(at: time, into: &fetches)
    }

    public mutating func reportPlans(_ on: Bool) {}

    public mutating func observeConditions(_ conditions: DeviceConditions, at time: Double, utcOffsetSeconds: Int32) {}

    public mutating func drainPlans(into plans: inout [MadePlan]) {}
}

/// A plan a policy asked for: when, and what it said.
public struct MadePlan: Sendable, Hashable {
    /// When the plan was asked for (the `--at` of the equivalent `fetchcast predict`).
    public var time: Double
    /// The planned fetches, in time order.
    public var fetches: [ScheduledFetch]

    /// Creates a record.
    public init(time: Double, fetches: [ScheduledFetch]) {
        self.time = time
        self.fetches = fetches
    }
}

/// What a policy is told about the device before the replay starts.
public struct DeviceContext: Sendable, Hashable {
    /// The device's fetch-enabled apps (the only apps it may fetch for), most launched first.
    public var apps: [Int32]
    /// Fetches per device per local day (⌊budget⌋ is the daily cap).
    public var budget: Double
    /// The freshness window τ in seconds.
    public var tau: Double
    /// The names of app symbols (index = symbol), so a policy can look apps up in a
    /// population prior learned elsewhere; empty when the caller has none.
    public var appNames: [String]
    /// The device's id in the trace (so a population prior can leave the device out); empty
    /// when the caller has none.
    public var device: String
    /// The apps' constraints and the system's rules (`--constraints`, `--system`): a replay
    /// holds back any fetch they refuse, whatever the policy, until they allow it; a policy that
    /// knows the device's conditions may keep to them (``SchedulerConfiguration/constraints``).
    public var constraints = FetchConstraints.none

    /// Creates a context.
    public init(apps: [Int32], budget: Double, tau: Double, appNames: [String] = [], device: String = "") {
        self.apps = apps
        self.budget = budget
        self.tau = tau
        self.appNames = appNames
        self.device = device
    }

    /// The daily cap ⌊budget⌋.
    public var dailyCap: Int { Int(saturating: budget.rounded(.down)) }

    /// A policy that sees one app at a time spends B/k_d per app: ⌊B/k_d⌋ a local day for each,
    /// so the device's total stays within ⌊B⌋.
    public var appBudget: Double { apps.isEmpty ? 0 : budget / Double(apps.count) }

    /// ⌊B/k_d⌋.
    public var appDailyCap: Int { Int(saturating: appBudget.rounded(.down)) }

    /// ``constraints`` for the device's apps, by app id (an app without a name gets `"*"`'s).
    public var schedulerConstraints: SchedulerConstraints? {
        constraints.resolved(apps: apps) { Int($0) < appNames.count ? appNames[Int($0)] : "" }
    }
}
