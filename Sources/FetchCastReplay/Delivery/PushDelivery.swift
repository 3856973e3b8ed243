import FetchCastModel

/// What became of one push (semantics d1): the in-memory detail of a replay (tests).
package struct DeliveryRecord: Sendable, Hashable {
    package enum Outcome: String, Sendable, Hashable {
        /// Delivered through the token bucket (at its send or at a later attempt).
        case delivered
        /// Delivered when its app was opened, past the bucket.
        case deliveredAtOpen
        /// Replaced by a newer push of the same app while held.
        case collapsed
        /// Expired, or still held at the device's last launch.
        case dropped
    }

    package var device: Int
    package var app: Int32
    package var sentAt: Double
    /// When it was delivered, collapsed or dropped.
    package var at: Double
    package var outcome: Outcome
}

/// One device's push service, for one (policy, budget) replay (semantics d1 of
/// docs/evaluation.md): decides when each push the backend sends is delivered, if ever.
///
/// Per fetch-enabled app slot it keeps a token bucket (``TokenBucket``, the generic cell rate
/// algorithm) and at most one held push (the newest). A value type driven
/// by ``PolicyReplay`` in time order; the fetches it hands back are made by the replay at the
/// instant given.
struct PushDelivery {
    /// What the push service knows of the device at an instant.
    struct DeviceState {
        var online: Bool
        var charging: Bool
        /// The device's latest launch of any app (−∞ before its first).
        var lastLaunch: Double
    }

    private struct Held {
        var fetch: PlannedFetch
        var sentAt: Double
    }

    let options: DeliveryOptions
    private var buckets: [TokenBucket]
    private var held: [Held?]
    /// Held pushes.
    private(set) var holding = 0
    /// The latest instant the delivery acted at (a send or an attempt): the next keep-alive is
    /// the first multiple of the keep-alive interval after it.
    private var clock = -Double.infinity
    private(set) var metrics = PushMetrics()
    /// The device index, for the records.
    private let device: Int

    init(options: DeliveryOptions, slots: Int, device: Int) {
        self.options = options
        self.device = device
        buckets = Array(repeating: TokenBucket(options), count: slots)
        held = Array(repeating: nil, count: slots)
    }

    /// The next keep-alive (or FCM maintenance window) at which held pushes are tried, `nil`
    /// when none is held.
    var nextKeepAlive: Double? {
        guard holding > 0 else { return nil }
        let k = options.keepAlive
        return ((clock / k).rounded(.down) + 1) * k
    }

    /// FCM: whether the device dozes at `time` (no launch of any app for `dozeAfter` seconds
    /// and not charging).
    private func dozes(at time: Double, _ state: DeviceState) -> Bool {
        options.kind == .fcm && time - state.lastLaunch >= options.dozeAfter && !state.charging
    }

    /// The backend sends a push for `fetch` (app slot `slot`) at `time`. A push held for the
    /// app is replaced (collapsed; dropped when it had expired). The push is delivered at once
    /// when the device is online, the bucket has a token and (FCM) the device is not dozing;
    /// it is held otherwise. Appends the fetch to make now, if delivered, to `out`.
    mutating func send(
        _ fetch: PlannedFetch, slot: Int, at time: Double, state: DeviceState, into out: inout [PlannedFetch],
        recorder: ReplayRecorder?
    ) {
        clock = time
        metrics.sent += 1
        if let h = held[slot] {
            held[slot] = nil
            holding -= 1
            let expired = time > h.sentAt + options.ttl
            if expired { metrics.dropped += 1 } else { metrics.collapsed += 1 }
            recorder?.record(DeliveryRecord(
                device: device, app: h.fetch.app, sentAt: h.sentAt, at: time, outcome: expired ? .dropped : .collapsed))
        }
        if state.online, buckets[slot].conforms(at: time), !dozes(at: time, state) {
            buckets[slot].take(at: time)
            metrics.deliver(delay: 0, atOpen: false)
            recorder?.record(DeliveryRecord(device: device, app: fetch.app, sentAt: time, at: time, outcome: .delivered))
            out.append(fetch)
        } else {
            held[slot] = Held(fetch: fetch, sentAt: time)
            holding += 1
        }
    }

    /// The device is active at `time` (a launch, a `state` row, or a keep-alive): each held
    /// push, in slot order, is dropped when expired, delivered past the bucket when `opened` is
    /// its app's slot (a launch of that app), else delivered when the device is online and the
    /// bucket has a token (doze does not hold it: the device is awake, or in a maintenance
    /// window). Appends the fetches to make now to `out`.
    mutating func attempt(
        at time: Double, opened: Int?, state: DeviceState, into out: inout [PlannedFetch], recorder: ReplayRecorder?
    ) {
        clock = time
        guard holding > 0 else { return }
        for slot in held.indices {
            guard let h = held[slot] else { continue }
            let outcome: DeliveryRecord.Outcome
            if time > h.sentAt + options.ttl {
                metrics.dropped += 1
                outcome = .dropped
            } else if state.online, slot == opened {
                metrics.deliver(delay: time - h.sentAt, atOpen: true)
                outcome = .deliveredAtOpen
                out.append(h.fetch)
            } else if state.online, buckets[slot].conforms(at: time) {
                buckets[slot].take(at: time)
                metrics.deliver(delay: time - h.sentAt, atOpen: false)
                outcome = .delivered
                out.append(h.fetch)
            } else {
                continue
            }
            held[slot] = nil
            holding -= 1
            recorder?.record(DeliveryRecord(device: device, app: h.fetch.app, sentAt: h.sentAt, at: time, outcome: outcome))
        }
    }

    /// The device's replay is over at `end`: pushes still held are dropped.
    mutating func finish(at end: Double, recorder: ReplayRecorder?) {
        for slot in held.indices {
            guard let h = held[slot] else { continue }
            metrics.dropped += 1
            recorder?.record(DeliveryRecord(device: device, app: h.fetch.app, sentAt: h.sentAt, at: end, outcome: .dropped))
            held[slot] = nil
        }
        holding = 0
    }
}
