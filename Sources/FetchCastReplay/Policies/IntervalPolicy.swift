import FetchCastCore
import FetchCastModel
import FetchCastTrace

/// `interval` (rule 4): each fetch-enabled app polls every T = 86400·k_d/B seconds, at
/// t0 + j·T (j = 1, 2, …; t0 = the app's first launch), computed in floating point.
///
/// It is causal: an app's polls start once its first launch is observed. The replay stops
/// waking policies after the device's last launch. Apps due at the same instant are fetched in
/// ascending app id.
struct IntervalPolicy: FetchPolicy, Sendable {
    private let period: Double
    private let apps: [Int32]
    private var start: [Double?]
    private var step: [Double]
    private var due: [Double]
    private(set) var nextWakeup: Double?

    /// Creates the policy for a device.
    init(context: DeviceContext) {
        apps = context.apps.sorted()
        period = context.budget > 0 ? 86_400 * Double(context.apps.count) / context.budget : .infinity
        start = Array(repeating: nil, count: apps.count)
        step = Array(repeating: 0, count: apps.count)
        due = Array(repeating: .infinity, count: apps.count)
    }

    mutating func wake(at time: Double, into fetches: inout [PlannedFetch]) {
        for i in apps.indices where due[i] <= time {
            fetches.append(PlannedFetch(app: apps[i], reason: .interval))
            step[i] += 1
            due[i] = start[i]! + step[i] * period
        }
        updateNext()
    }

    mutating func observe(_ event: DeviceEvent) {
        guard event.kind == .launch, let i = apps.firstIndex(of: event.app), start[i] == nil else { return }
        start[i] = event.time
        step[i] = 1
        due[i] = event.time + period
        updateNext()
    }

    mutating func didFetch(app: Int32, at time: Double, result: FetchResult) {}

    private mutating func updateNext() {
        let m = due.min() ?? .infinity
        nextWakeup = m.isFinite ? m : nil
    }
}
