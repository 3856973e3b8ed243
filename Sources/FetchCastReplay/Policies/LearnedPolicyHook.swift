import FetchCastModel

/// Where the `learned` policy comes from: FetchCast's model and scheduler (FetchCastModel's
/// ``LearnedPolicy``), built per device from its ``DeviceContext``.
///
/// This is the one place to change how it is built (a population prior, a model
/// configuration): register another factory under `learned` in a ``PolicyRegistry`` to try
/// variants without touching the engine.
enum LearnedPolicyHook {
    /// A remark shown when the policy is used (`nil`: none).
    static let note: String? = nil
    /// Builds the policy for one device, shrunk toward a population learned from traces (a
    /// device that is part of that population gets a prior from the others only), or toward
    /// the generic prior without one.
    ///
    /// `conditionAware: false` builds `learned-blind`: the same policy deaf to `state` rows,
    /// the condition-blind reference `learned` is measured against on traces with conditions.
    static func factory(population: PopulationSample?, conditionAware: Bool = true) -> PolicyFactory {
        { context in
            LearnedPolicy(context: context, prior: population?.prior(for: context.device, appNames: context.appNames) ?? .none,
                          conditionAware: conditionAware)
        }
    }
}
