import FetchCastModel

/// How the `planned` policy asks for plans (`evaluate --replan`, `--replan-on-event`,
/// `--visibility`; recorded in `run.json`).
public struct PlanningOptions: Sendable, Hashable {
    /// What a plan is made from.
    public enum Visibility: String, Sendable, Hashable, CaseIterable {
        /// Every event of the device (an OS, a launcher, an SDK, or a backend that hears of
        /// every launch).
        case device
        /// Each fetch-enabled app planned from its own launches, fetch results and publishes
        /// only, as if no other app existed on the phone, with ⌊B/k_d⌋ a day per app (an app's
        /// own backend, or an app scheduling its own BGAppRefreshTask).
        case app
    }

    /// Seconds between two plans.
    public var replan: Double
    /// Also ask one second after each event the policy sees.
    public var replanOnEvent: Bool
    /// What a plan is made from.
    public var visibility: Visibility
    /// Through a push service (`evaluate --delivery apns|fcm`): whether the backend sends what
    /// `predict --delivery` answers (``PushTiming``: each fetch at its `send_at`, leaving out
    /// those the service would not deliver by their time or would collapse) rather than a push
    /// at every planned `fetch_at`.
    public var sendsAtSendAt: Bool

    /// Creates options (defaults: every hour, not on events, visibility `device`, pushes sent at
    /// `send_at`).
    public init(replan: Double = 3600, replanOnEvent: Bool = false, visibility: Visibility = .device, sendsAtSendAt: Bool = true) {
        self.replan = replan
        self.replanOnEvent = replanOnEvent
        self.visibility = visibility
        self.sendsAtSendAt = sendsAtSendAt
    }
}

/// Where the `planned` policy comes from: FetchCastModel's ``PlannedPolicy``, the plans
/// `fetchcast predict` answers, asked for as ``PlanningOptions`` say.
enum PlannedPolicyHook {
    /// - Parameter delivery: The push service the backend sends through (`evaluate --delivery`).
    static func factory(population: PopulationSample?, planning: PlanningOptions, delivery: DeliveryOptions) -> PolicyFactory {
        let sendsThrough = planning.sendsAtSendAt && delivery.isPush ? delivery : nil
        return { context in
            let prior = population?.prior(for: context.device, appNames: context.appNames) ?? .none
            switch planning.visibility {
            case .device:
                return PlannedPolicy(
                    context: context, replanInterval: planning.replan, replanOnEvent: planning.replanOnEvent, prior: prior,
                    delivery: sendsThrough)
            case .app:
                let apps = context.apps.sorted()
                var one = context
                one.budget = context.appBudget
                return PerAppPolicy(apps: apps, policies: apps.map { app in
                    one.apps = [app]
                    return PlannedPolicy(
                        context: one, replanInterval: planning.replan, replanOnEvent: planning.replanOnEvent, prior: prior,
                        delivery: sendsThrough, seesDevice: false)
                })
            }
        }
    }
}
