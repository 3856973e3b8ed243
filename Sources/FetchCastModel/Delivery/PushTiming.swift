/// Which fetches of a plan a push backend sends, when, and when the push service is expected to
/// deliver them (docs/push.md, "Sending a plan"): what `predict --delivery` and
/// `GET /v1/devices/{device}/plan?delivery=` answer (`send_at`, `pushes_left_this_hour`), and what
/// the `planned` policy sends in `evaluate --delivery apns|fcm` (served = measured).
///
/// The service is the one of semantics d1 (``DeliveryOptions``), seen from the backend, which
/// knows only what the device's events say:
/// - **Throttle.** The token bucket of (device, app) as its last fetch left it: that fetch is
///   taken as a push delivered through the bucket (what a backend that logs deliveries back as
///   fetch events sees), so the next conforms from `lastFetch + T − (burst − 1)·T`. Exact for
///   APNs' bucket of 1; with a larger bucket (FCM) earlier deliveries are not counted.
/// - **Doze (FCM).** A backend that hears of every app's launches expects the device to doze
///   from `dozeAfter` after its last launch, unless it was charging at its last `state` row: a
///   push sent then is expected at the next maintenance window (a multiple of `keepAlive`).
///
/// Each fetch is sent at its time (never before `now`). A fetch the bucket would not let
/// through when it is delivered is not sent: it could not arrive by its time, and held it would
/// take a token late and hold the app's next push too. Of two pushes of one app where the later
/// is sent while the earlier is expected to be held, only the later is sent (it would collapse
/// the earlier). Sending earlier than the fetch's time was measured and does not pay: a push the
/// doze holds is delivered at the device's next activity, which a plan's fetch precedes by
/// design, while one sent before the last window fetches up to an hour early (docs/push.md).
public enum PushTiming {
    /// One push of a plan: which fetch (its index in the plan), when to send it, and when the
    /// push service is expected to deliver it (the fetch is made then).
    public struct Push: Sendable, Hashable {
        /// The fetch's index in the plan.
        public var index: Int
        /// When to send it (Unix seconds): its fetch's time, or the plan's start when later.
        public var sendAt: Double
        /// When it is expected to be delivered: at its send, or at the next maintenance window
        /// when the device is expected to doze (FCM).
        public var deliveredAt: Double
    }

    /// What the backend knows of the device at the plan's start.
    public struct DeviceView: Sendable, Hashable {
        /// The device's latest launch of any app, when the backend hears of every app's
        /// launches (`nil` otherwise: an app's own backend cannot tell whether the device dozes).
        public var lastLaunch: Double?
        /// Whether it was charging at its latest `state` row (`false` without one).
        public var charging: Bool
        /// Each app's latest fetch (a delivered push).
        public var lastFetch: [Int32: Double]

        public init(lastLaunch: Double?, charging: Bool, lastFetch: [Int32: Double]) {
            self.lastLaunch = lastLaunch
            self.charging = charging
            self.lastFetch = lastFetch
        }

        /// The app's bucket as its latest fetch (taken as a delivered push) left it; full
        /// without one.
        func bucket(of app: Int32, _ delivery: DeliveryOptions) -> TokenBucket {
            lastFetch[app].map { TokenBucket(delivery, deliveredAt: $0) } ?? TokenBucket(delivery)
        }
    }

    /// The pushes that carry `plan` (in time order) from `now`, in the order they are sent.
    public static func pushes(
        for plan: [ScheduledFetch], from now: Double, delivery: DeliveryOptions, device: DeviceView
    ) -> [Push] {
        guard delivery.isPush else {
            return plan.indices.map { Push(index: $0, sendAt: plan[$0].time, deliveredAt: plan[$0].time) }
        }
        var buckets: [Int32: TokenBucket] = [:]
        var kept: [Push] = []
        var bucketBefore: [TokenBucket] = []  // per kept push: its app's bucket before it
        var lastOfApp: [Int32: Int] = [:]  // index into `kept`
        for (i, fetch) in plan.enumerated() {
            let (send, delivered) = timing(of: fetch.time, from: now, delivery: delivery, device: device)
            // The app's previous push, when it would still be held at this send: this one would
            // collapse it, so it is not sent and its token is not taken.
            let collapsed = lastOfApp[fetch.app].flatMap { k in
                kept[k].index >= 0 && kept[k].deliveredAt > send && kept[k].deliveredAt > kept[k].sendAt ? k : nil
            }
            var bucket = collapsed.map { bucketBefore[$0] } ?? buckets[fetch.app] ?? device.bucket(of: fetch.app, delivery)
            // Not through the bucket at its delivery: held, it would take a token late and hold
            // the app's next push too.
            guard bucket.conforms(at: delivered) else { continue }
            if let k = collapsed { kept[k].index = -1 }
            bucketBefore.append(bucket)
            bucket.take(at: delivered)
            buckets[fetch.app] = bucket
            lastOfApp[fetch.app] = kept.count
            kept.append(Push(index: i, sendAt: send, deliveredAt: delivered))
        }
        return kept.filter { $0.index >= 0 }.sorted { ($0.sendAt, $0.index) < ($1.sendAt, $1.index) }
    }

    /// Per app of `deliveries` (the plan's pushes: app and expected delivery), how many more
    /// pushes the throttle lets through from `now` to the end of its clock hour (UTC), after the
    /// plan's own pushes delivered in that hour.
    public static func pushesLeftThisHour(
        deliveries: [(app: Int32, at: Double)], from now: Double, delivery: DeliveryOptions, device: DeviceView
    ) -> [Int32: Int] {
        let hourEnd = ((now / 3600).rounded(.down) + 1) * 3600
        var buckets: [Int32: TokenBucket] = [:]
        for (app, at) in deliveries {
            var bucket = buckets[app] ?? device.bucket(of: app, delivery)
            if at < hourEnd { bucket.take(at: at) }
            buckets[app] = bucket
        }
        return buckets.mapValues { start in
            var bucket = start
            var n = 0
            var t = bucket.nextConforming(from: now)
            while t < hourEnd {
                n += 1
                bucket.take(at: t)
                t = bucket.nextConforming(from: t)
            }
            return n
        }
    }

    /// When a push for a fetch at `f` is sent (at `f`, not before `now`) and when it is
    /// expected to be delivered: then, or (FCM, a device seen dozing) at the next maintenance
    /// window.
    static func timing(of f: Double, from now: Double, delivery: DeliveryOptions, device: DeviceView) -> (send: Double, delivered: Double) {
        let send = max(f, now)
        guard delivery.kind == .fcm, !device.charging, let last = device.lastLaunch, send >= last + delivery.dozeAfter else {
            return (send, send)
        }
        return (send, ((send / delivery.keepAlive).rounded(.down) + 1) * delivery.keepAlive)
    }
}

extension LearnedPolicy {
    /// What a push backend knows of the device from the events this scheduler was told of: its
    /// latest launch (when `seesDevice`: told of every app's events), whether it was charging,
    /// and its apps' latest fetches.
    public func pushView(seesDevice: Bool) -> PushTiming.DeviceView {
        var lastFetch: [Int32: Double] = [:]
        for app in apps { if let t = model.lastFetch(of: app) { lastFetch[app] = t } }
        return PushTiming.DeviceView(
            lastLaunch: seesDevice ? model.lastLaunchOfAnyApp : nil, charging: conditions?.isCharging ?? false, lastFetch: lastFetch)
    }
}
