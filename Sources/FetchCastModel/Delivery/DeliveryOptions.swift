/// How the fetches of push policies reach the device (`evaluate --delivery`, semantics d1 in
/// docs/evaluation.md; recorded in `run.json`).
///
/// `direct` is the v1 replay: a policy's fetch happens when it asks. `apns` and `fcm` replay a
/// backend that sends a silent push at each of those instants, and the fetch happens when the
/// push service delivers it: a per-(device, app) token bucket, deferral of held pushes to the
/// device's next activity, newest-only collapse, delivery at app open, expiry, and (FCM) doze.
public struct DeliveryOptions: Sendable, Hashable {
    /// The push service.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// No push: the fetch is made when the policy asks (v1).
        case direct
        /// Apple Push Notification service background notifications
        /// (`apns-push-type: background`, `apns-priority: 5`).
        case apns
        /// Firebase Cloud Messaging data messages of normal priority with a `collapse_key`.
        case fcm
    }

    /// The push service.
    public var kind: Kind
    /// The token bucket's refill: pushes per hour per (device, app) in the long run.
    public var perHour: Double
    /// The token bucket's size: pushes that may go out back to back after a quiet spell.
    public var burst: Int
    /// Seconds after its send at which a held push expires (`apns-expiration`, FCM `ttl`).
    public var ttl: Double
    /// Seconds between the device's keep-alives (APNs) or doze maintenance windows (FCM): the
    /// instants k·keepAlive (Unix seconds) at which held pushes are tried again.
    public var keepAlive: Double
    /// FCM: seconds without a launch of any app after which a device that is not charging
    /// dozes (normal-priority messages then wait).
    public var dozeAfter: Double

    /// The defaults of `kind` (docs/evaluation.md, "Delivery semantics d1").
    public init(kind: Kind = .direct) {
        self.kind = kind
        switch kind {
        case .direct, .apns:
            // Apple: "don't try to send more than two or three per hour": 2 an hour with a
            // bucket of 1 lets at most 3 through in any hour.
            perHour = 2
            burst = 1
            keepAlive = 1800
        case .fcm:
            // FCM's collapsible message throttling: a burst of 20 per app per device, one more
            // every 3 minutes.
            perHour = 20
            burst = 20
            keepAlive = 3600
        }
        ttl = 3600
        dozeAfter = 3600
    }

    /// Whether pushes go through a push service (not `direct`).
    public var isPush: Bool { kind != .direct }

    /// The most pushes of one (device, app) the bucket lets through in any hour:
    /// `burst + perHour` (the full bucket, then an hour of refills).
    public var maxPerHour: Double { Double(burst) + perHour }
}
