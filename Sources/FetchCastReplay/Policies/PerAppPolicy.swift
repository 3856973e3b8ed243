import FetchCastCore
import FetchCastModel
import FetchCastTrace

/// A device's fetch-enabled apps each run by a policy of its own that sees only that app's
/// events: launches, fetch results and publishes of the app (`planned` with visibility `app`,
/// what an app's own backend or an app scheduling its own `BGAppRefreshTask` knows).
///
/// The engine caps it per app (``PolicyRegistry/CapRule/perApp``).
struct PerAppPolicy<Policy: FetchPolicy>: FetchPolicy {
    private let apps: [Int32]
    private var policies: [Policy]

    /// One policy per app, in the same order.
    init(apps: [Int32], policies: [Policy]) {
        precondition(apps.count == policies.count)
        self.apps = apps
        self.policies = policies
    }

    var nextWakeup: Double? {
        var next: Double?
        for p in policies { if let w = p.nextWakeup { next = min(next ?? w, w) } }
        return next
    }

    mutating func wake(at time: Double, into fetches: inout [PlannedFetch]) {
        // Apps due at the same instant fetch in app order (the order of `apps`).
        for i in policies.indices where policies[i].nextWakeup.map({ $0 <= time }) ?? false {
            policies[i].wake(at: time, into: &fetches)
        }
    }

    mutating func observe(_ event: DeviceEvent) {
        guard let i = apps.firstIndex(of: event.app) else { return }
        policies[i].observe(event)
    }

    mutating func didFetch(app: Int32, at time: Double, result: FetchResult) {
        guard let i = apps.firstIndex(of: app) else { return }
        policies[i].didFetch(app: app, at: time, result: result)
    }

    mutating func reportPlans(_ on: Bool) {
        for i in policies.indices { policies[i].reportPlans(on) }
    }

    mutating func drainPlans(into plans: inout [MadePlan]) {
        for i in policies.indices { policies[i].drainPlans(into: &plans) }
    }
}
