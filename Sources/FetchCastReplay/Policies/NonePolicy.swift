import FetchCastCore
import FetchCastModel
import FetchCastTrace

/// `none`: never fetches (caches are refreshed by launches only).
struct NonePolicy: FetchPolicy, Sendable {
    /// Creates the policy.
    init() {}
    var nextWakeup: Double? { nil }
    mutating func wake(at time: Double, into fetches: inout [PlannedFetch]) {}
    mutating func observe(_ event: DeviceEvent) {}
    mutating func didFetch(app: Int32, at time: Double, result: FetchResult) {}
}
