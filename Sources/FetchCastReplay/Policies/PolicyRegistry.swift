import FetchCastModel

/// Builds a causal policy for one device; the engine calls it once per (device, budget).
public typealias PolicyFactory = @Sendable (DeviceContext) -> any FetchPolicy

/// The policies `fetchcast evaluate` knows, by name.
///
/// Causal policies are built through a ``PolicyFactory`` and the engine holds them to ⌊B⌋
/// fetches per local day of the fetch. The oracle is the one clairvoyant entry: the engine gives
/// it a look-ahead over the device's launches, and it caps itself by the launch's local day.
public struct PolicyRegistry: Sendable {
    /// How a registered policy is built.
    public enum Maker: Sendable {
        /// A causal policy (sees only the past).
        case causal(PolicyFactory)
        /// The oracle bound of rule 4 (sees the device's future launches).
        case oracle
    }

    /// One registered policy.
    public struct Entry: Sendable {
        /// How it is built.
        public var maker: Maker
        /// The one budget it runs with whatever `--budgets` says (`none` runs once, at 0).
        public var fixedBudget: Double?
        /// A remark shown to the user when the policy is used (e.g. that it is a stand-in).
        public var note: String?
    }

    private var entries: [String: Entry] = [:]

    /// An empty registry.
    public init() {}

    /// The standard policies: `none`, `interval`, `oracle`, `hourly`, `learned`.
    public static var standard: PolicyRegistry {
        var r = PolicyRegistry()
        r.register("none", fixedBudget: 0) { _ in NonePolicy() }
        r.register("interval") { IntervalPolicy(context: $0) }
        r.entries["oracle"] = Entry(maker: .oracle, fixedBudget: nil, note: nil)
        r.register("hourly") { HourlyPolicy(context: $0) }
        r.register("learned", note: LearnedPolicyHook.note, factory: LearnedPolicyHook.factory)
        return r
    }

    /// The standard policies with `learned` shrunk toward a population prior.
    public static func standard(prior: PopulationPrior?) -> PolicyRegistry {
        var r = standard
        if let prior { r.register("learned", factory: LearnedPolicyHook.factory(prior: prior)) }
        return r
    }

    /// The standard policies with `learned` shrunk toward a population learned from traces,
    /// leaving each replayed device out of its own prior.
    public static func standard(population: PopulationSample) -> PolicyRegistry {
        var r = standard
        r.register("learned", factory: LearnedPolicyHook.factory(population: population))
        return r
    }

    /// Adds or replaces a causal policy.
    /// - Parameters:
    ///   - name: The name `--policies` uses.
    ///   - fixedBudget: A budget that replaces `--budgets` for this policy.
    ///   - note: A remark shown when the policy is used.
    ///   - factory: Builds the policy for one device.
    public mutating func register(_ name: String, fixedBudget: Double? = nil, note: String? = nil, factory: @escaping PolicyFactory) {
        entries[name] = Entry(maker: .causal(factory), fixedBudget: fixedBudget, note: note)
    }

    /// The entry for a name.
    public subscript(name: String) -> Entry? { entries[name] }

    /// Every registered name, sorted.
    public var names: [String] { entries.keys.sorted() }
}
