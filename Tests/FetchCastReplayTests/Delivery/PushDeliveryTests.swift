import FetchCastCore
import FetchCastModel
import FetchCastTrace
import Foundation
import Testing
@testable import FetchCastReplay
import FetchCastTestSupport

/// Semantics d1 (docs/evaluation.md, "Delivery semantics d1") on hand-computed tiny traces: a
/// backend sends a push at each scripted instant, and the fetch happens at its delivery.
///
/// Times are seconds after 2024-01-01T00:00Z, a multiple of every keep-alive used here, so
/// keep-alives fall at 1800, 3600, … (APNs, 30 min) or 3600, 7200, … (FCM, 1 h).
struct PushDeliveryTests {
    /// A registry whose `pushed` policy sends a push for each (seconds, app).
    private func pushed(_ trace: Trace, _ sends: [(Double, String)]) -> PolicyRegistry {
        var r = PolicyRegistry.standard
        let sorted = Set(trace.events.filter { $0.kind != .state }.map(\.app)).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let plan = sends.map { (time: trace.at($0.0), app: Int32(sorted.firstIndex(of: $0.1)!)) }
        r.register("pushed", sendsPushes: true) { _ in ScriptedPolicy(plan: plan) }
        return r
    }

    private func run(_ trace: Trace, _ sends: [(Double, String)], _ delivery: DeliveryOptions) throws -> Evaluation {
        var options = EvaluationOptions(policies: ["pushed"], budgets: [24], threads: 1)
        options.delivery = delivery
        return try Evaluator.evaluate(.events(trace.events), options: options, registry: pushed(trace, sends), collectDetail: true)
    }

    /// Launches of `a` at 0 and 20000 s (the device's span), and `others` launches of `b`.
    private func trace(b others: [Double] = [], a more: [Double] = []) -> Trace {
        var t = Trace()
        for (s, app) in ([(0.0, "a"), (20_000, "a")] + others.map { ($0, "b") } + more.map { ($0, "a") }).sorted(by: { $0.0 < $1.0 }) {
            t.launch(app, at: s)
        }
        return t
    }

    private func fetchTimes(_ e: Evaluation, _ t: Trace) -> [Double] {
        e.fetchRecords[0].map { ($0.time - t.at(0)).rounded() }
    }

    @Test func aThrottledPushWaitsForATokenAndTheNextKeepAlive() throws {
        // APNs: a bucket of 1, refilled every 1800 s. The push at 200 s finds it empty (the one at
        // 100 s took the token, back at 1900 s): the keep-alive at 1800 s is too early, the one
        // at 3600 s delivers it.
        let t = trace()
        let e = try run(t, [(100, "a"), (200, "a")], DeliveryOptions(kind: .apns))
        #expect(fetchTimes(e, t) == [100, 3600])
        let p = e.row("pushed").push
        #expect(p.sent == 2 && p.delivered == 2 && p.delayed == 1 && p.collapsed == 0 && p.dropped == 0)
        #expect(p.delays == [0, 3400])
        // Direct: both when asked.
        #expect(fetchTimes(try run(t, [(100, "a"), (200, "a")], DeliveryOptions(kind: .direct)), t) == [100, 200])
    }

    @Test func aHeldPushIsDeliveredAtTheDevicesNextActivity() throws {
        // A launch of another app at 2000 s (the token is back since 1900 s) delivers it, before
        // the keep-alive at 3600 s; the launch of `a` at 2500 s is then fresh.
        let t = trace(b: [2000], a: [2500])
        let e = try run(t, [(100, "a"), (200, "a")], DeliveryOptions(kind: .apns))
        #expect(fetchTimes(e, t) == [100, 2000])
        #expect(e.launchRecords[0].first { ($0.timeMicros / 1_000_000) == Int64(t.at(2500)) }?.fresh == true)
        // So does a `state` row.
        var s = trace()
        s.state(ConditionChange(network: .cellular), at: 2000)
        s.events.sort { $0.timeMicros < $1.timeMicros }
        #expect(fetchTimes(try run(s, [(100, "a"), (200, "a")], DeliveryOptions(kind: .apns)), s) == [100, 2000])
    }

    @Test func onlyTheNewestHeldPushOfAnAppIsKept() throws {
        let t = trace()
        let e = try run(t, [(100, "a"), (200, "a"), (300, "a")], DeliveryOptions(kind: .apns))
        let p = e.row("pushed").push
        #expect(p.sent == 3 && p.delivered == 2 && p.collapsed == 1)
        #expect(p.delays == [0, 3300])  // the push sent at 300 s, delivered at 3600 s
        let collapsed = e.deliveryRecords[0].filter { $0.outcome == .collapsed }
        #expect(collapsed.map { $0.sentAt - t.at(0) } == [200])
    }

    @Test func aHeldPushGoesOutAtOnceWhenItsAppIsOpened() throws {
        // The launch of `a` at 1000 s delivers the held push past the empty bucket; another
        // app's launch there would not (the token is back only at 1900 s).
        let t = trace(a: [1000])
        let e = try run(t, [(100, "a"), (200, "a")], DeliveryOptions(kind: .apns))
        #expect(fetchTimes(e, t) == [100, 1000])
        let p = e.row("pushed").push
        #expect(p.deliveredAtOpen == 1 && p.delays == [0, 800])
        let other = trace(b: [1000])
        #expect(fetchTimes(try run(other, [(100, "a"), (200, "a")], DeliveryOptions(kind: .apns)), other) == [100, 3600])
    }

    @Test func aHeldPushExpiresWhenTheDeviceStaysAway() throws {
        // TTL 600 s: the push sent at 200 s is dead by the keep-alive at 1800 s.
        var d = DeliveryOptions(kind: .apns)
        d.ttl = 600
        let t = trace()
        let e = try run(t, [(100, "a"), (200, "a")], d)
        #expect(fetchTimes(e, t) == [100])
        let p = e.row("pushed").push
        #expect(p.sent == 2 && p.delivered == 1 && p.dropped == 1)
    }

    @Test func anFCMMessageWaitsWhileTheDeviceDozes() throws {
        // FCM: no launch since 0 s, so the device dozes from 3600 s; a message sent at 5000 s
        // waits for the maintenance window at 7200 s. One sent at 1000 s goes at once.
        let t = trace()
        let e = try run(t, [(1000, "a"), (5000, "a")], DeliveryOptions(kind: .fcm))
        #expect(fetchTimes(e, t) == [1000, 7200])
        #expect(e.row("pushed").push.delays == [0, 2200])
        // Charging: no doze.
        var c = trace()
        c.state(ConditionChange(power: .charging), at: 4000)
        c.events.sort { $0.timeMicros < $1.timeMicros }
        #expect(fetchTimes(try run(c, [(1000, "a"), (5000, "a")], DeliveryOptions(kind: .fcm)), c) == [1000, 5000])
    }

    @Test func noAppIsDeliveredMorePushesInAnyHourThanTheBucketAllows() throws {
        // `interval` at 1440 a day asks every 300 s per app: far above APNs' 2 an hour.
        let t = randomTrace(seed: 7)
        var options = EvaluationOptions(policies: ["interval"], budgets: [1440], threads: 1)
        options.delivery = DeliveryOptions(kind: .apns)
        let e = try Evaluator.evaluate(.events(t.events), options: options, collectDetail: true)
        let through = e.deliveryRecords[0].filter { $0.outcome == .delivered }
        let p = e.row("interval").push
        #expect(p.sent > 3 * p.delivered && through.count > 100)
        var most = 0
        for (key, group) in Dictionary(grouping: through, by: { "\($0.device)/\($0.app)" }) {
            let times = group.map(\.at).sorted()
            // Every closed hour [d, d + 3600 s] from a delivery d (so every clock hour too).
            for (i, start) in times.enumerated() {
                let n = times[i...].prefix { $0 <= start + 3600 }.count
                most = max(most, n)
                #expect(Double(n) <= options.delivery.maxPerHour, "\(key) at \(start)")
            }
        }
        #expect(most == 3)  // the bound is reached: the bucket, not the trace, limits
    }

    /// `planned` sending what `predict --delivery` answers: at one push every 2 hours per app,
    /// sending at every `fetch_at` has pushes held, collapsed or dropped; leaving out what the
    /// bucket (as each app's last fetch left it) would hold, every push sent is delivered when
    /// sent. No `state` rows, so no device is offline: the backend's estimate is exact.
    @Test func plannedSendsNoPushTheThrottleWouldHold() throws {
        let t = randomTrace(seed: 5)
        var options = EvaluationOptions(policies: ["planned"], budgets: [24], threads: 1)
        options.delivery = DeliveryOptions(kind: .apns)
        options.delivery.perHour = 0.5
        options.planning = PlanningOptions(replan: 3600, replanOnEvent: true, sendsAtSendAt: false)
        let atFetch = try Evaluator.evaluate(.events(t.events), options: options).row("planned").push
        #expect(atFetch.delayed + atFetch.collapsed + atFetch.dropped > 0, "\(atFetch)")
        options.planning.sendsAtSendAt = true
        let registry = PolicyRegistry.standard(population: nil, planning: options.planning, delivery: options.delivery)
        let e = try Evaluator.evaluate(.events(t.events), options: options, registry: registry, collectDetail: true)
        let atSend = e.row("planned").push
        #expect(atSend.sent > 0 && atSend.delivered == atSend.sent, "\(atSend)")
        #expect(atSend.delayed == 0 && atSend.collapsed == 0 && atSend.dropped == 0, "\(atSend)")
        // So no app of any device is even *sent* more pushes in any hour than the bucket allows.
        let records = e.deliveryRecords[0]
        #expect(records.count == atSend.sent && records.allSatisfy { $0.outcome == .delivered && $0.at == $0.sentAt })
        for (key, group) in Dictionary(grouping: records, by: { "\($0.device)/\($0.app)" }) {
            let times = group.map(\.sentAt).sorted()
            for (i, start) in times.enumerated() {
                #expect(Double(times[i...].prefix { $0 <= start + 3600 }.count) <= options.delivery.maxPerHour, "\(key) at \(start)")
            }
        }
    }

    @Test func directAndPoliciesThatDoNotPushAreUnchanged() throws {
        let t = randomTrace(seed: 3)
        var options = EvaluationOptions(policies: ["none", "interval", "oracle", "hourly", "learned", "planned"], budgets: [12], threads: 1)
        let direct = try Evaluator.evaluate(.events(t.events), options: options)
        options.delivery = DeliveryOptions(kind: .apns)
        let apns = try Evaluator.evaluate(.events(t.events), options: options)
        for name in ["none", "oracle", "learned"] { #expect(apns.row(name) == direct.row(name)) }
        #expect(direct.summary.allSatisfy { $0.metrics.push == PushMetrics() })
        // A push service that never holds anything (no throttle to speak of, never offline)
        // delivers every push when it is sent: the same fetches as direct.
        options.delivery.perHour = 3600
        options.delivery.burst = 1000
        let free = try Evaluator.evaluate(.events(t.events), options: options)
        for name in ["interval", "hourly", "planned"] {
            var m = free.row(name)
            #expect(m.push.sent > 0 && m.push.delivered == m.push.sent && m.push.delayed == 0)
            m.push = PushMetrics()
            #expect(m == direct.row(name))
        }
    }

    @Test func deliveryCSVAndRunJSONOnlyWithAPushService() throws {
        let dir = try TemporaryDirectory()
        let t = randomTrace(seed: 5)
        var options = EvaluationOptions(policies: ["interval", "learned"], budgets: [24], threads: 1)
        _ = try Evaluator.run(.events(t.events), options: options, outputDirectory: dir.path)
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/delivery.csv"))
        let directManifest = try String(contentsOfFile: dir.path + "/run.json", encoding: .utf8)
        #expect(!directManifest.contains("delivery"))
        options.delivery = DeliveryOptions(kind: .fcm)
        let e = try Evaluator.run(.events(t.events), options: options, outputDirectory: dir.path)
        let csv = try String(contentsOfFile: dir.path + "/delivery.csv", encoding: .utf8).split(separator: "\n")
        #expect(csv.count == 2 && csv[0].hasPrefix("policy,budget,delivery,device_days,pushes_sent,"))
        let p = e.row("interval").push
        #expect(csv[1].hasPrefix("interval,24,fcm,") && csv[1].contains(",\(p.sent),\(p.delivered),\(p.delayed),"))
        let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir.path + "/run.json"))) as? [String: Any]
        let delivery = manifest?["delivery"] as? [String: Any]
        #expect(delivery?["semantics"] as? String == "d1" && delivery?["service"] as? String == "fcm")
        #expect(delivery?["policies"] as? [String] == ["interval"])
        // A direct run afterwards removes the stale delivery.csv.
        options.delivery = DeliveryOptions()
        _ = try Evaluator.run(.events(t.events), options: options, outputDirectory: dir.path)
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/delivery.csv"))
    }
}
