import FetchCastCore
import FetchCastModel
import FetchCastTrace

/// One (policy, budget) to replay on every device.
struct ReplayPlan: Sendable {
    var policy: String
    var budget: Double
    var entry: PolicyRegistry.Entry
}

/// Pass 2 for one device: merges its spooled events with the publishes to every device, in
/// time order, and drives every (policy, budget) replay through them at once.
///
/// - Complexity: O((events + wakeups) × plans) time, O(apps × plans) memory.
enum DeviceRunner {
    struct Outcome {
        var metrics: [DeviceMetrics]
        var error: EvaluationError?
    }

    static func replay(
        deviceIndex: Int, scan: ScanResult, plans: [ReplayPlan], options: EvaluationOptions,
        recorders: [ReplayRecorder?], progress: ReplayProgress? = nil
    ) -> Outcome {
        let device = scan.devices[deviceIndex]
        let canonical = scan.canonicalApp
        let sortedApps = device.apps.sorted()
        var slotOf = [Int16](repeating: -1, count: scan.appNames.count)
        for (i, a) in sortedApps.enumerated() { slotOf[Int(a)] = Int16(i) }
        let content = ContentTracker(hasContent: sortedApps.map { scan.appHasContent[Int($0)] }, tau: options.tau)
        let end = Double(device.lastLaunchMicros) / 1_000_000
        let rules = SlotRules(
            constraints: sortedApps.map { options.constraints.constraints(forApp: scan.appNames[Int($0)]) },
            system: options.constraints.system,
            meanBytes: sortedApps.map { Int($0) < scan.appMeanBytes.count ? scan.appMeanBytes[Int($0)] : nil })
        var cursors: [SpoolCursor] = []

        var replays: [PolicyReplay] = []
        for (i, plan) in plans.enumerated() {
            var context = DeviceContext(
                apps: device.apps, budget: plan.budget, tau: options.tau, appNames: scan.appNames, device: device.name)
            context.constraints = options.constraints
            let policy: any FetchPolicy
            let capRule: PolicyRegistry.CapRule?
            switch plan.entry.maker {
            case .causal(let factory):
                policy = factory(context)
                capRule = plan.entry.cap
            case .oracle:
                let look = scan.spool.cursor(device.stream)
                cursors.append(look)
                let constrained = rules.constrains
                policy = OraclePolicy(context: context, rules: constrained ? rules : nil) { timeline in
                    while let r = look.next() {
                        if r.kind == .state, constrained {
                            timeline.append(r.conditions, atMicros: r.timeMicros)
                        } else if r.kind == .launch {
                            return FutureLaunch(
                                time: Double(r.timeMicros) / 1_000_000, utcOffsetSeconds: r.utcOffsetSeconds,
                                app: canonical[Int(r.appSymbol)])
                        }
                    }
                    return nil
                }
                capRule = nil
            }
            let cap = capRule == .perApp ? context.appDailyCap : context.dailyCap
            replays.append(PolicyReplay(
                name: plan.policy, policy: policy, capRule: capRule, cap: cap, tau: options.tau,
                end: end, device: deviceIndex, slotOf: slotOf, slots: sortedApps.count,
                energy: options.energy, wifiEnergy: options.wifiEnergy, rules: rules, offset: device.firstOffset,
                recorder: recorders[i], delivery: plan.entry.sendsPushes ? options.delivery : nil))
        }

        let ownCursor = scan.spool.cursor(device.stream)
        let globalCursor = scan.globalStream.map { scan.spool.cursor($0) }
        cursors.append(ownCursor)
        if let globalCursor { cursors.append(globalCursor) }
        var own = SpoolReader(ownCursor)
        var global = globalCursor.map(SpoolReader.init)
        var group: [ReplayEvent] = []
        group.reserveCapacity(16)

        @inline(__always) func event(_ r: SpoolRecord, everyDevice: Bool) -> ReplayEvent {
            let state = r.kind == .state
            return ReplayEvent(
                time: Double(r.timeMicros) / 1_000_000, micros: r.timeMicros, utcOffsetSeconds: r.utcOffsetSeconds,
                app: state ? -1 : canonical[Int(r.appSymbol)], kind: r.kind, result: r.result, everyDevice: everyDevice,
                conditions: r.conditions)
        }

        // Records replayed since the last report to `progress` (a few thousand at a time).
        var replayed = 0
        defer { progress?.add(replayed) }
        replays.withUnsafeMutableBufferPointer { replays in
            while true {
                if replayed >= 4096, let progress {
                    progress.add(replayed)
                    replayed = 0
                }
                // The next instant, and every event at it (publishes to every device first), in
                // input order: ``InstantOrder`` arranges them below.
                let a = own.peek()
                let b = global?.peek()
                let t: Int64
                switch (a, b) {
                case (nil, nil): return
                case (let x?, nil): t = x.timeMicros
                case (nil, let y?): t = y.timeMicros
                case (let x?, let y?): t = min(x.timeMicros, y.timeMicros)
                }
                // The common case: one launch or fetch of this device alone at its instant (the
                // looks up to and at it, then the event, as ``InstantOrder`` has it).
                if let x = a, x.timeMicros == t, InstantOrder.step(of: x.kind) == .launchOrFetch, b?.timeMicros != t {
                    own.advance()
                    if own.peek()?.timeMicros != t {
                        let e = event(x, everyDevice: false)
                        let slot = Int(slotOf[Int(e.app)])
                        for i in replays.indices { replays[i].runWakeups(until: e.time, inclusive: true, content: content) }
                        let older = e.kind == .launch && slot >= 0 ? content.latestPublishOlderThanTau(slot: slot, at: e.time) : -.infinity
                        for i in replays.indices { replays[i].apply(e, slot: slot, olderPublish: older, content: content) }
                        replayed += 1
                        continue
                    }
                    group.removeAll(keepingCapacity: true)
                    group.append(event(x, everyDevice: false))
                } else {
                    group.removeAll(keepingCapacity: true)
                }
                while let r = global?.peek(), r.timeMicros == t {
                    global?.advance()
                    group.append(event(r, everyDevice: true))
                }
                while let r = own.peek(), r.timeMicros == t {
                    own.advance()
                    group.append(event(r, everyDevice: false))
                }
                replayed += group.count
                let time = Double(t) / 1_000_000
                for i in replays.indices { replays[i].runWakeups(until: time, inclusive: false, content: content) }
                // The instant in ``InstantOrder``'s order: publishes (to every device first),
                // `state` rows (a state row at t holds from t on: a look at t sees it), the
                // looks at t, then launches and fetches.
                InstantOrder.forEach(in: group, step: { InstantOrder.step(of: $0.kind, everyDevice: $0.everyDevice) }, looks: {
                    for i in replays.indices { replays[i].runWakeups(until: time, inclusive: true, content: content) }
                }) { e in
                    switch e.kind {
                    case .publish:
                        let slot = Int(slotOf[Int(e.app)])
                        if slot >= 0 { content.publish(slot: slot, at: e.time) }
                        for i in replays.indices { replays[i].observePublish(e) }
                    case .state:
                        for i in replays.indices { replays[i].observeState(e) }
                    case .launch, .fetch:
                        let slot = Int(slotOf[Int(e.app)])
                        let older = e.kind == .launch && slot >= 0 ? content.latestPublishOlderThanTau(slot: slot, at: e.time) : -.infinity
                        for i in replays.indices { replays[i].apply(e, slot: slot, olderPublish: older, content: content) }
                    }
                }
            }
        }
        var metrics: [DeviceMetrics] = []
        var error: EvaluationError?
        for i in replays.indices {
            replays[i].finish(content: content)
            let r = replays[i]
            var m = r.metrics
            m.devices = 1
            m.deviceDays = device.days
            metrics.append(m)
            if error == nil, let v = r.violation {
                error = .policyContract(policy: r.name, device: device.name, reason: v)
            }
        }
        if error == nil, let failure = cursors.lazy.compactMap(\.failure).first { error = failure }
        return Outcome(metrics: metrics, error: error)
    }
}
