import FetchCastModel
import FetchCastTrace

/// `none`: never fetches (caches are refreshed by launches only).
public struct NonePolicy: FetchPolicy, Sendable {
    /// Creates the policy.
    public init() {}
    public var nextWakeup: Double? { nil }
    public mutating func wake(at time: Double, into fetches: inout [PlannedFetch]) {}
    public mutating func observe(_ event: DeviceEvent) {}
    public mutating func didFetch(app: Int32, at time: Double, result: FetchResult) {}
}
