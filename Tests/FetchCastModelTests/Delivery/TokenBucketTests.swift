@testable import FetchCastModel
import Testing

/// The push throttle's rule (semantics d1), computed by hand: T = 3600 / perHour, a push
/// conforms at t iff t ≥ tat − (burst − 1)·T, a delivery sets tat = max(tat, t) + T.
struct TokenBucketTests {
    @Test func apnsLetsOnePushThroughEveryHalfHour() {
        var bucket = TokenBucket(DeliveryOptions(kind: .apns))  // T = 1800 s, bucket of 1
        #expect(bucket.conforms(at: -1e9), "a full bucket lets any push through")
        bucket.take(at: 100)
        #expect(bucket.tat == 1900)
        #expect(!bucket.conforms(at: 1899.999))
        #expect(bucket.conforms(at: 1900))
        #expect(bucket.nextConforming(from: 0) == 1900)
        #expect(bucket.nextConforming(from: 2500) == 2500)
        // Taken late, the next token is T after the delivery, not after the earlier tat.
        bucket.take(at: 5000)
        #expect(bucket.tat == 6800)
    }

    @Test func fcmLetsABurstOfTwentyThroughThenOneEveryThreeMinutes() {
        var bucket = TokenBucket(DeliveryOptions(kind: .fcm))  // T = 180 s, bucket of 20
        #expect(bucket.interval == 180 && bucket.tolerance == 19 * 180)
        var through = 0
        while bucket.conforms(at: 0) {
            bucket.take(at: 0)
            through += 1
        }
        #expect(through == 20)
        #expect(bucket.tat == 20 * 180)
        #expect(bucket.nextConforming(from: 0) == 180, "one token back after T")
    }

    @Test func aBackendTakesTheLastFetchAsADeliveredPush() {
        let bucket = TokenBucket(DeliveryOptions(kind: .apns), deliveredAt: 1000)
        #expect(bucket.tat == 2800)
        #expect(bucket.nextConforming(from: 1000) == 2800)
    }
}
