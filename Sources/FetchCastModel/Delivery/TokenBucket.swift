/// A push service's throttle of one (device, app) pair (semantics d1 of docs/evaluation.md), as
/// the generic cell rate algorithm: with T = 3600 / `perHour` s, a push conforms at t iff
/// t ≥ tat − (burst − 1)·T, and a push delivered through the bucket at t sets
/// tat = max(tat, t) + T. The one rule both the replay's push service (`PushDelivery`) and the
/// backend's estimate (``PushTiming``) apply.
package struct TokenBucket: Hashable, Sendable {
    /// T: the seconds one token takes to come back.
    package let interval: Double
    /// (burst − 1)·T: how far ahead of `tat` a push still conforms.
    package let tolerance: Double
    /// The theoretical arrival time: −∞ for a full bucket.
    package private(set) var tat: Double

    /// A full bucket (no push delivered yet).
    package init(_ delivery: DeliveryOptions) {
        interval = 3600 / delivery.perHour
        tolerance = Double(delivery.burst - 1) * interval
        tat = -.infinity
    }

    /// The bucket as a push delivered at `time` left it, when it is all the backend knows.
    package init(_ delivery: DeliveryOptions, deliveredAt time: Double) {
        self.init(delivery)
        tat = time + interval
    }

    /// Whether a push conforms (a token is there) at `time`.
    package func conforms(at time: Double) -> Bool { time >= tat - tolerance }

    /// The first instant from `time` on at which a push conforms.
    package func nextConforming(from time: Double) -> Double { max(time, tat - tolerance) }

    /// A push is delivered through the bucket at `time` (it takes a token).
    package mutating func take(at time: Double) { tat = max(tat, time) + interval }
}
