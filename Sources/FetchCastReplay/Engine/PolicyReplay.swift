import FetchCastCore
import FetchCastModel
import FetchCastTrace

/// One input event as the engine replays it (canonical app id, seconds).
struct ReplayEvent {
    var time: Double
    var micros: Int64
    var utcOffsetSeconds: Int32
    var app: Int32
    var kind: EventKind
    var result: FetchResult?
    /// A publish to every device (its offset is the publisher's, not the device's).
    var everyDevice: Bool
    /// What a `state` row sets (empty for every other kind).
    var conditions = ConditionChange()

    var deviceEvent: DeviceEvent {
        DeviceEvent(time: time, utcOffsetSeconds: utcOffsetSeconds, app: app, kind: kind, result: result)
    }
}

/// What rule 7 needs per fetch-enabled app slot of a device: its constraints, the system's
/// rules, and the app's mean fetch size.
struct SlotRules: Sendable {
    var constraints: [AppConstraints]
    var system: SystemRules
    var meanBytes: [Double?]

    /// Whether any fetch can be refused: some app has constraints, or the system has rules.
    var constrains: Bool { system != .none || constraints.contains { !$0.isEmpty } }

    /// Whether the system's rules and the constraints of the app in `slot` allow a fetch under
    /// `conditions`.
    func allows(_ slot: Int, under conditions: DeviceConditions) -> Bool {
        system.allows(conditions) && constraints[slot].allows(conditions)
    }
}

/// One (policy, budget) replay of one device: drives the policy, applies rules 3–7 and counts.
///
/// The device runner feeds it time groups, each in ``InstantOrder``'s order: the policy's
/// wakeups before t, publishes at t, `state` rows at t, wakeups at t, then launches and input
/// fetches at t in input order. A value type, so that the runner's hot loop mutates it in place without
/// dynamic exclusivity checks.
struct PolicyReplay {
    struct Pair {
        var launched = false
        var lastLaunch = -Double.infinity
        var lastRefresh = -Double.infinity
        var refreshFetch: Int?
    }

    let name: String
    private var policy: any FetchPolicy
    private let capRule: PolicyRegistry.CapRule?
    private let cap: Int
    private let tau: Double
    private let end: Double
    private let device: Int
    private let slotOf: [Int16]
    private let recorder: ReplayRecorder?
    private(set) var metrics = DeviceMetrics()
    private var pairs: [Pair]
    private var energy: EnergyMeter
    /// The Wi-Fi radio's meter (rule 7); `energy` is the cellular one.
    private var wifiEnergy: EnergyMeter
    private let rules: SlotRules
    /// Wi-Fi fetches' records wait for their session's closing tail as cellular ones do.
    private var pendingWifi: FetchRecord?
    private var capCounts: [Int: Int] = [:]
    private var offset: Int32
    /// The device's conditions now (rule 7 of docs/evaluation.md).
    private(set) var conditions = DeviceConditions.unknown
    private var fetchID = 0
    private var floor = -Double.infinity
    /// The device's last launch of any app so far (its silence before a launch: `slices.csv`).
    private var lastDeviceLaunch = -Double.infinity
    private var planned: [PlannedFetch] = []
    private var considered: [ConsideredFetch] = []
    private var pending: FetchRecord?
    private var madePlans: [MadePlan] = []
    /// Per app slot, the fetch the constraints blocked and that waits for them to allow it
    /// (rule 7); the oracle fetches only where they allow, so none of its fetches waits.
    private var deferred: [PlannedFetch?]
    private var deferredCount = 0
    /// The instant of the `state` row after which a deferred fetch is allowed: its fetches are
    /// made there, before the policy's own wakeups at that instant.
    private var deferredDue: Double?
    /// Set when the policy broke its contract; it is then no longer woken.
    private(set) var violation: String?
    /// The push service its fetches go through (semantics d1); `nil`: each fetch is made when
    /// the policy asks (v1).
    private var push: PushDelivery?
    /// The instant of the `state` row at which held pushes are tried (like ``deferredDue``).
    private var pushDue: Double?
    /// Scratch: the fetches a push delivery hands back.
    private var delivered: [PlannedFetch] = []

    /// - Parameters:
    ///   - capRule: How the engine caps the policy (`nil`: it caps itself, the oracle).
    ///   - cap: ⌊B⌋ for ``PolicyRegistry/CapRule/device``, ⌊B/k_d⌋ for `perApp`.
    init(name: String, policy: any FetchPolicy, capRule: PolicyRegistry.CapRule?, cap: Int, tau: Double, end: Double, device: Int,
         slotOf: [Int16], slots: Int, energy: EnergyProfile, wifiEnergy: EnergyProfile = .wifi,
         rules: SlotRules? = nil, offset: Int32, recorder: ReplayRecorder?, delivery: DeliveryOptions? = nil) {
        self.name = name
        self.policy = policy
        self.capRule = capRule
        self.cap = cap
        self.tau = tau
        self.end = end
        self.device = device
        self.slotOf = slotOf
        self.recorder = recorder
        self.offset = offset
        self.energy = EnergyMeter(profile: energy)
        self.wifiEnergy = EnergyMeter(profile: wifiEnergy)
        self.rules = rules ?? SlotRules(
            constraints: Array(repeating: .none, count: slots), system: .none, meanBytes: Array(repeating: nil, count: slots))
        if recorder != nil { self.policy.reportPlans(true) }
        pairs = Array(repeating: Pair(), count: slots)
        deferred = Array(repeating: nil, count: slots)
        planned.reserveCapacity(8)
        if let delivery, delivery.isPush { push = PushDelivery(options: delivery, slots: slots, device: device) }
    }

    /// Wakes the policy at each of its wakeups before `t` (or at or before `t` when
    /// `inclusive`), never after the device's last launch.
    @inline(__always)
    mutating func runWakeups(until t: Double, inclusive: Bool, content: ContentTracker) {
        if let d = deferredDue, inclusive ? d <= t : d < t {
            deferredDue = nil
            if d <= end { makeDeferred(at: d, content: content) }
        }
        if let d = pushDue, inclusive ? d <= t : d < t {
            pushDue = nil
            if d <= end { attemptDelivery(at: d, opened: nil, content: content) }
        }
        while violation == nil {
            let next = policy.nextWakeup
            // Semantics d1: a keep-alive comes before the policy's wakeups at its instant.
            if push != nil, let k = push?.nextKeepAlive, k <= end, inclusive ? k <= t : k < t, next.map({ k <= $0 }) ?? true {
                attemptDelivery(at: k, opened: nil, content: content)
                continue
            }
            guard let w = next, inclusive ? w <= t : w < t, w <= end else { break }
            guard w > floor else {
                violation = "its next wakeup \(w) is not after \(floor), the time of its previous wakeup or of the last launch or fetch it observed (a fetch that reacts to an event must come after it)"
                return
            }
            floor = w
            planned.removeAll(keepingCapacity: true)
            if let recorder {
                considered.removeAll(keepingCapacity: true)
                policy.wake(at: w, into: &planned, considered: &considered)
                for c in considered {
                    recorder.record(DecisionRecord(device: device, time: w, utcOffsetSeconds: offset, decision: c))
                }
                policy.drainPlans(into: &madePlans)
                for p in madePlans { recorder.record(PlanRecord(device: device, utcOffsetSeconds: offset, plan: p)) }
                madePlans.removeAll(keepingCapacity: true)
            } else {
                policy.wake(at: w, into: &planned)
            }
            if push != nil {
                for f in planned { send(f, at: w, content: content) }
            } else {
                for f in planned { fetch(f, at: w, content: content) }
            }
        }
    }

    /// What the push service knows of the device now.
    private var pushState: PushDelivery.DeviceState {
        PushDelivery.DeviceState(online: conditions.isConnected, charging: conditions.isCharging, lastLaunch: lastDeviceLaunch)
    }

    /// Semantics d1: the backend sends a push for `f` at `time`; the fetch is made if and when
    /// it is delivered. A fetch for an app that is not fetch-enabled is refused as in v1.
    private mutating func send(_ f: PlannedFetch, at time: Double, content: ContentTracker) {
        let a = Int(f.app)
        guard a >= 0, a < slotOf.count, slotOf[a] >= 0 else { return fetch(f, at: time, content: content) }
        // Locals, so that the push service is the only part of self the call modifies.
        var out = delivered
        delivered = []
        out.removeAll(keepingCapacity: true)
        let (state, recorder, slot) = (pushState, recorder, Int(slotOf[a]))
        push?.send(f, slot: slot, at: time, state: state, into: &out, recorder: recorder)
        for d in out { fetch(d, at: time, content: content) }
        delivered = out
    }

    /// Semantics d1: the device is active at `time` (a launch of the app in slot `opened`, if
    /// fetch-enabled, a `state` row or a keep-alive): the held pushes it delivers make their
    /// fetches now.
    private mutating func attemptDelivery(at time: Double, opened: Int?, content: ContentTracker) {
        var out = delivered
        delivered = []
        out.removeAll(keepingCapacity: true)
        let (state, recorder) = (pushState, recorder)
        push?.attempt(at: time, opened: opened, state: state, into: &out, recorder: recorder)
        for d in out { fetch(d, at: time, content: content) }
        delivered = out
    }

    private mutating func fetch(_ f: PlannedFetch, at time: Double, content: ContentTracker, deferred wasDeferred: Bool = false) {
        let a = Int(f.app)
        guard a >= 0, a < slotOf.count, slotOf[a] >= 0 else {
            metrics.refusedFetches += 1
            return
        }
        let slot = Int(slotOf[a])
        // Rule 7: a fetch whose constraints or system rules fail now is not made: not priced,
        // not counted against the cap, and the policy is not told. It waits for them, as an OS
        // runs constrained work: made at the first `state` row after which they allow it (one
        // per app: a later blocked fetch of the app takes its place).
        guard allows(slot) else {
            metrics.blockedFetches += 1
            if deferred[slot] == nil { deferredCount += 1 }
            deferred[slot] = f
            return
        }
        if deferred[slot] != nil {
            deferred[slot] = nil
            deferredCount -= 1
        }
        if let capRule, capRule != .none {
            let day = LocalTime.day(time: time, utcOffsetSeconds: offset)
            // Per app: one count per (day, slot); the key keeps days apart by the slot count.
            let key = capRule == .perApp ? day * pairs.count + slot : day
            let used = capCounts[key, default: 0]
            guard used < cap else {
                metrics.refusedFetches += 1
                return
            }
            capCounts[key] = used + 1
            if capCounts.count > 8 * pairs.count {
                let oldest = capRule == .perApp ? (day - 2) * pairs.count : day - 2
                capCounts = capCounts.filter { $0.key >= oldest }
            }
        }
        fetchID += 1
        metrics.fetches += 1
        if wasDeferred { metrics.deferredFetches += 1 }
        let network = conditions.effectiveNetwork
        if network == .offline {
            // Rule 7: the fetch is made and fails; nothing is refreshed and no radio wakes.
            metrics.offlineFetches += 1
            recorder?.record(FetchRecord(
                device: device, id: fetchID, app: f.app, time: time, utcOffsetSeconds: offset, result: .failed,
                wakeup: 0, joules: 0, reason: f.reason))
            policy.didFetch(app: f.app, at: time, result: .failed)
            return
        }
        let result: FetchResult =
            !content.hasContent[slot] || content.lastPublish[slot] > pairs[slot].lastRefresh ? .newData : .noData
        pairs[slot].lastRefresh = time
        pairs[slot].refreshFetch = fetchID
        if result == .newData { metrics.newDataFetches += 1 } else { metrics.noDataFetches += 1 }
        let onBattery = !conditions.isCharging
        let charge: EnergyMeter.Charge
        if network == .wifi {
            charge = wifiEnergy.add(at: time, onBattery: onBattery)
        } else {
            charge = energy.add(at: time, onBattery: onBattery)
            metrics.cellularFetches += 1
            metrics.cellularBytes += rules.meanBytes[slot] ?? 0
        }
        if charge.openedSession { metrics.wakeups += 1 }
        if let recorder {
            let record = FetchRecord(
                device: device, id: fetchID, app: f.app, time: time, utcOffsetSeconds: offset, result: result,
                wakeup: charge.session, joules: charge.joules, reason: f.reason)
            if network == .wifi {
                Self.hand(record, closing: charge.previousClosingTail, pending: &pendingWifi, to: recorder)
            } else {
                Self.hand(record, closing: charge.previousClosingTail, pending: &pending, to: recorder)
            }
        }
        policy.didFetch(app: f.app, at: time, result: result)
    }

    private func allows(_ slot: Int) -> Bool { rules.allows(slot, under: conditions) }

    /// Makes the deferred fetches the conditions now allow, in app id order.
    private mutating func makeDeferred(at time: Double, content: ContentTracker) {
        for slot in deferred.indices {
            guard let f = deferred[slot], allows(slot) else { continue }
            fetch(f, at: time, content: content, deferred: true)
        }
    }

    /// Records the fetch waiting for its closing tail once the next fetch on the same radio
    /// has been charged (adding the tail when that fetch opened a new session), then keeps `record`.
    private static func hand(_ record: FetchRecord, closing: Double, pending: inout FetchRecord?, to recorder: ReplayRecorder) {
        if var p = pending {
            p.joules += closing
            recorder.record(p)
        }
        pending = record
    }

    /// Applies a `state` row (after the wakeups before its instant, before those at it): the
    /// device's conditions change, and the policy is told.
    mutating func observeState(_ e: ReplayEvent) {
        conditions.apply(e.conditions)
        policy.observeConditions(conditions, at: e.time, utcOffsetSeconds: e.utcOffsetSeconds)
        if deferredCount > 0, deferred.indices.contains(where: { deferred[$0] != nil && allows($0) }) { deferredDue = e.time }
        if let push, push.holding > 0 { pushDue = e.time }
    }

    /// Delivers a publish (after the wakeups before its instant).
    @inline(__always)
    mutating func observePublish(_ e: ReplayEvent) {
        policy.observe(e.deviceEvent)
    }

    /// Applies a launch or an input fetch: scores launches of fetch-enabled apps, then lets the
    /// policy observe it. `olderPublish` is the content tracker's answer for the launch's app.
    @inline(__always)
    mutating func apply(_ e: ReplayEvent, slot: Int, olderPublish: Double, content: ContentTracker) {
        offset = e.utcOffsetSeconds
        if e.kind == .launch && slot >= 0 {
            score(e, slot: slot, olderPublish: olderPublish)
        }
        if e.kind == .launch { lastDeviceLaunch = e.time }
        if e.time > floor { floor = e.time }
        policy.observe(e.deviceEvent)
        // Semantics d1: a launch is device activity; a held push of the launched app goes out
        // at once (after the launch is scored: it cannot make that launch fresh).
        if e.kind == .launch, let push, push.holding > 0 {
            attemptDelivery(at: e.time, opened: slot >= 0 ? slot : nil, content: content)
        }
    }

    private mutating func score(_ e: ReplayEvent, slot: Int, olderPublish: Double) {
        let t = e.time
        metrics.launches += 1
        let p = pairs[slot]
        if p.launched {
            let staleness = t - p.lastRefresh
            let needy = t - p.lastLaunch > tau
            let fresh = staleness <= tau
            let contentFresh = olderPublish <= p.lastRefresh
            metrics.scoredLaunches += 1
            if needy {
                metrics.needyLaunches += 1
                metrics.slices.count(SilenceSlices.Slice(silence: t - lastDeviceLaunch), fresh: fresh)
            }
            if fresh { metrics.freshLaunches += 1 }
            if fresh && needy { metrics.freshNeedyLaunches += 1 }
            if contentFresh { metrics.contentFreshLaunches += 1 }
            metrics.stalenessSeconds += min(staleness, 86_400)
            recorder?.record(LaunchRecord(
                device: device, app: e.app, timeMicros: e.micros, utcOffsetSeconds: e.utcOffsetSeconds,
                staleness: staleness, needy: needy, fresh: fresh, contentFresh: contentFresh,
                coveringFetch: p.refreshFetch))
        }
        pairs[slot] = Pair(launched: true, lastLaunch: t, lastRefresh: t, refreshFetch: nil)
    }

    /// Runs the wakeups left up to the device's last launch and closes the energy account.
    mutating func finish(content: ContentTracker) {
        runWakeups(until: end, inclusive: true, content: content)
        if push != nil {
            let (recorder, end) = (recorder, end)
            push?.finish(at: end, recorder: recorder)
            metrics.push = push?.metrics ?? PushMetrics()
        }
        let closing = energy.finish()
        if var p = pending {
            p.joules += closing
            recorder?.record(p)
            pending = nil
        }
        let wifiClosing = wifiEnergy.finish()
        if var p = pendingWifi {
            p.joules += wifiClosing
            recorder?.record(p)
            pendingWifi = nil
        }
        // Wi-Fi joules are added only when there are any, so a replay without Wi-Fi keeps its
        // v1 sum exactly.
        metrics.joules = wifiEnergy.sessions > 0 ? energy.joules + wifiEnergy.joules : energy.joules
        metrics.batteryJoules = wifiEnergy.sessions > 0 ? energy.batteryJoules + wifiEnergy.batteryJoules : energy.batteryJoules
        recorder?.finish()
    }
}
