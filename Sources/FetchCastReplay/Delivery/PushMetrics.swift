/// The pushes of one (policy, budget) replay through a push service (`delivery.csv`), for one
/// device or summed over devices (semantics d1, docs/evaluation.md).
public struct PushMetrics: Sendable, Hashable, Codable {
    /// Pushes the backend sent (one per fetch the policy asked for).
    public var sent = 0
    /// Pushes delivered (each makes the fetch, at its delivery).
    public var delivered = 0
    /// Delivered pushes whose delivery came after their send (delay > 0).
    public var delayed = 0
    /// Delivered pushes that went out when their app was opened, past the bucket.
    public var deliveredAtOpen = 0
    /// Held pushes replaced by a newer push of the same app before delivery (newest only).
    public var collapsed = 0
    /// Held pushes that expired (TTL) before delivery, or were still held at the device's last
    /// launch.
    public var dropped = 0
    /// Every delivered push's delay (delivery − send), seconds, in delivery order per device and
    /// devices in ascending id order.
    public var delays: [Double] = []

    /// Creates zeroed counters.
    public init() {}

    /// Adds another device's pushes.
    public mutating func add(_ o: PushMetrics) {
        sent += o.sent
        delivered += o.delivered
        delayed += o.delayed
        deliveredAtOpen += o.deliveredAtOpen
        collapsed += o.collapsed
        dropped += o.dropped
        delays += o.delays
    }

    /// Counts a delivery `delay` seconds after its send.
    mutating func deliver(delay: Double, atOpen: Bool) {
        delivered += 1
        if delay > 0 { delayed += 1 }
        if atOpen { deliveredAtOpen += 1 }
        delays.append(delay)
    }

    /// The nearest-rank `p`-quantile of the delays (the smallest delay d with at least ⌈p·n⌉
    /// delays ≤ d), `nil` without deliveries.
    /// - Complexity: O(n log n) in the number of deliveries.
    public func delayQuantile(_ p: Double) -> Double? {
        guard !delays.isEmpty else { return nil }
        let sorted = delays.sorted()
        let rank = max(1, Int((p * Double(sorted.count)).rounded(.up)))
        return sorted[min(rank, sorted.count) - 1]
    }
}
