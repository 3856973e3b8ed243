import FetchCastModel

/// Builds a causal policy for one device; the engine calls it once per (device, budget).
public typealias PolicyFactory = @Sendable (DeviceContext) -> any FetchPolicy

/// The policies `fetchcast evaluate` knows, by name.
///
/// Causal policies are built through a ``PolicyFactory``; the engine holds each to its
/// ``CapRule`` (⌊B⌋ fetches per device and local day of the fetch for the policies that choose
/// their times; ⌊B/k_d⌋ per app for those that see one app at a time; none for `interval`, which
/// spends B a day by construction). The oracle is the one clairvoyant entry: the engine gives
/// it a look-ahead over the device's launches, and it caps itself by the launch's local day.
public struct PolicyRegistry: Sendable {
    /// How a registered policy is built.
    public enum Maker: Sendable {
        /// A causal policy (sees only the past).
        case causal(PolicyFactory)
        /// The oracle bound of rule 4 (sees the device's future launches).
        case oracle
    }

    /// How the engine caps a causal policy's fetches per local day of the fetch.
    public enum CapRule: Sendable, Hashable {
        /// ⌊B⌋ per device.
        case device
        /// ⌊B/k_d⌋ per fetch-enabled app (a policy that sees one app at a time).
        case perApp
        /// No cap: the policy's definition fixes how many fetches it makes (`interval`).
        case none
    }

    /// One registered policy.
    public struct Entry: Sendable {
        /// How it is built.
        public var maker: Maker
        /// The one budget it runs with whatever `--budgets` says (`none` runs once, at 0).
        public var fixedBudget: Double?
        /// A remark shown to the user when the policy is used (e.g. that it is a stand-in).
        public var note: String?
        /// How the engine caps it (causal policies only).
        public var cap: CapRule = .device
        /// Whether a backend runs it and reaches the device by push: with `evaluate --delivery
        /// apns|fcm` its fetches go through the push service (semantics d1).
        public var sendsPushes = false
    }

    private var entries: [String: Entry] = [:]

    /// An empty registry.
    public init() {}

    /// The standard policies: `none`, `interval`, `oracle`, `hourly`, `weekly`, `learned`,
    /// `learned-blind` (`learned` deaf to device conditions), `planned` (replanning every hour, visibility `device`), with the generic prior.
    public static var standard: PolicyRegistry { standard(population: nil) }

    /// The standard policies, `learned` and `planned` shrunk toward a population learned from
    /// traces (each replayed device left out of its own prior), `planned` driven as `planning` says.
    /// `interval`, `hourly` and `planned` are what a backend can send as pushes (``Entry/sendsPushes``);
    /// `planned` sends each fetch at its `send_at` for `delivery` when `planning` says so.
    public static func standard(
        population: PopulationSample?, planning: PlanningOptions = PlanningOptions(), delivery: DeliveryOptions = DeliveryOptions()
    ) -> PolicyRegistry {
        var r = PolicyRegistry()
        r.register("none", fixedBudget: 0) { _ in NonePolicy() }
        r.register("interval", cap: .none, sendsPushes: true) { IntervalPolicy(context: $0) }
        r.entries["oracle"] = Entry(maker: .oracle, fixedBudget: nil, note: nil)
        r.register("hourly", sendsPushes: true) { HourlyPolicy(context: $0) }
        r.register("weekly", cap: .perApp) { context in
            let apps = context.apps.sorted()
            return PerAppPolicy(apps: apps, policies: apps.map { WeeklyPolicy(app: $0, tau: context.tau) })
        }
        r.register("learned", note: LearnedPolicyHook.note, factory: LearnedPolicyHook.factory(population: population))
        r.register("learned-blind", note: LearnedPolicyHook.note,
                   factory: LearnedPolicyHook.factory(population: population, conditionAware: false))
        r.register("planned", cap: planning.visibility == .app ? .perApp : .device, sendsPushes: true,
                   factory: PlannedPolicyHook.factory(population: population, planning: planning, delivery: delivery))
        return r
    }

    /// Adds or replaces a causal policy.
    /// - Parameters:
    ///   - name: The name `--policies` uses.
    ///   - fixedBudget: A budget that replaces `--budgets` for this policy.
    ///   - note: A remark shown when the policy is used.
    ///   - cap: How the engine caps its fetches.
    ///   - sendsPushes: Whether its fetches go through `--delivery` (a backend's pushes).
    ///   - factory: Builds the policy for one device.
    public mutating func register(
        _ name: String, fixedBudget: Double? = nil, note: String? = nil, cap: CapRule = .device, sendsPushes: Bool = false,
        factory: @escaping PolicyFactory
    ) {
        entries[name] = Entry(maker: .causal(factory), fixedBudget: fixedBudget, note: note, cap: cap, sendsPushes: sendsPushes)
    }

    /// The entry for a name.
    public subscript(name: String) -> Entry? { entries[name] }

    /// Every registered name, sorted.
    public var names: [String] { entries.keys.sorted() }
}
