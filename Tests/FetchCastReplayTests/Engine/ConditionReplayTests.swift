import FetchCastCore
import FetchCastModel
import FetchCastTrace
import Testing
@testable import FetchCastReplay
import FetchCastTestSupport

/// Rule 7: device conditions in the replay, on hand-computed tiny traces.
struct ConditionReplayTests {
    /// Launches of `a` at 0 s and 7200 s; Wi-Fi while charging from 100 s, cellular on battery
    /// from 1500 s, offline from 2500 s; fetches of `a` at 1000, 2000 and 3000 s.
    private func tiny() -> (Trace, PolicyRegistry) {
        var t = Trace()
        t.launch("a", at: 0)
        t.state(ConditionChange(network: .wifi, power: .charging), at: 100)
        t.state(ConditionChange(network: .cellular, power: .battery), at: 1500)
        t.state(ConditionChange(network: .offline), at: 2500)
        t.launch("a", at: 7200)
        return (t, scripted(t, [(1000, "a"), (2000, "a"), (3000, "a")]))
    }

    private let wifiSession = 0.0791 * 0.1244 + 2 * 0.27 + 0.2381 * 0.1193
    private let lteSession = 0.26 * 1.21 + 2 * 1.2 + 11.5 * 1.06

    @Test func pricesEachFetchByItsNetworkAndFailsOfflineFetches() throws {
        let (t, registry) = tiny()
        let e = try evaluate(t, policies: ["scripted"], registry: registry)
        let m = e.row("scripted")
        #expect(m.fetches == 3)
        #expect(m.offlineFetches == 1)
        #expect(m.cellularFetches == 1)
        #expect(m.wakeups == 2)  // one Wi-Fi session, one LTE session; the offline fetch wakes nothing
        #expect(abs(m.joules - (wifiSession + lteSession)) < 1e-9)
        // The Wi-Fi fetch was made while charging: the battery paid for the LTE one only.
        #expect(abs(m.batteryJoules - lteSession) < 1e-9)
        #expect(e.fetchRecords[0].sorted { $0.time < $1.time }.map(\.result) == [.newData, .newData, .failed])
        #expect(e.usesConditions)
    }

    @Test func anOfflineFetchRefreshesNothing() throws {
        var online = Trace()
        online.launch("a", at: 0)
        online.state(ConditionChange(network: .cellular), at: 10)
        online.launch("a", at: 5000)
        var offline = Trace()
        offline.launch("a", at: 0)
        offline.state(ConditionChange(network: .offline), at: 10)
        offline.launch("a", at: 5000)
        // Online, the fetch at 4900 s makes the launch at 5000 s fresh; offline it fails.
        let on = try evaluate(online, policies: ["scripted"], registry: scripted(online, [(4900, "a")])).row("scripted")
        #expect(on.freshLaunches == 1 && on.wakeups == 1)
        let m = try evaluate(offline, policies: ["scripted"], registry: scripted(offline, [(4900, "a")])).row("scripted")
        #expect(m.fetches == 1 && m.offlineFetches == 1)
        #expect(m.freshLaunches == 0)
        #expect(m.joules == 0 && m.wakeups == 0)
    }

    @Test func blocksFetchesWhoseConstraintsFailWithoutPricingThem() throws {
        let (t, registry) = tiny()
        let unmetered = FetchConstraints(apps: ["*": AppConstraints(network: .unmetered)])
        let m = try evaluate(t, policies: ["scripted"], registry: registry, constraints: unmetered).row("scripted")
        // Only the Wi-Fi fetch runs; the cellular and offline ones are blocked.
        #expect(m.fetches == 1 && m.blockedFetches == 2)
        #expect(abs(m.joules - wifiSession) < 1e-9)
        #expect(m.cellularFetches == 0)
        // A specific app's entry replaces "*": `a` needs only to be connected.
        let connected = FetchConstraints(apps: ["*": AppConstraints(network: .unmetered), "a": AppConstraints(network: .any)])
        let n = try evaluate(t, policies: ["scripted"], registry: registry, constraints: connected).row("scripted")
        #expect(n.fetches == 2 && n.blockedFetches == 1)
        // Charging only: the Wi-Fi fetch while charging runs.
        let charging = FetchConstraints(apps: ["*": AppConstraints(charging: true)])
        let c = try evaluate(t, policies: ["scripted"], registry: registry, constraints: charging).row("scripted")
        #expect(c.fetches == 1 && c.blockedFetches == 2)
    }

    @Test func iOSRefusesLowPowerModeAndALowBattery() throws {
        var t = Trace()
        t.launch("a", at: 0)
        t.state(ConditionChange(battery: 19), at: 100)
        t.state(ConditionChange(battery: 50, lowPower: true), at: 1500)
        t.state(ConditionChange(lowPower: false), at: 2500)
        t.launch("a", at: 7200)
        let registry = scripted(t, [(1000, "a"), (2000, "a"), (3000, "a")])
        let ios = try evaluate(t, policies: ["scripted"], registry: registry, constraints: FetchConstraints(system: .ios)).row("scripted")
        // The fetches at 1000 s and 2000 s wait; one of them is made once Low Power Mode ends.
        #expect(ios.fetches == 2 && ios.blockedFetches == 2 && ios.deferredFetches == 1)
        let none = try evaluate(t, policies: ["scripted"], registry: registry).row("scripted")
        #expect(none.fetches == 3 && none.blockedFetches == 0)
    }

    @Test func aTraceWithoutStateRowsKeepsItsV1Numbers() throws {
        var t = Trace()
        t.launch("a", at: 0)
        t.launch("a", at: 7200)
        let e = try evaluate(t, policies: ["scripted"], registry: scripted(t, [(1000, "a"), (1010, "a")]))
        let m = e.row("scripted")
        // One LTE session: promotion, two transfers, the tail gap from the first transfer's end
        // (1000 + 0.26 + 2 s) to the second fetch at 1010 s, 7.74 s, and a closing tail.
        let expected = 0.26 * 1.21 + 2 * 2 * 1.2 + 7.74 * 1.06 + 11.5 * 1.06
        #expect(abs(m.joules - expected) < 1e-6)  // times near 1.7e9 s keep about 1e-7 s
        #expect(m.cellularFetches == 2 && m.batteryJoules == m.joules)
        #expect(!e.usesConditions)
    }

    @Test(arguments: [11, 12, 13] as [UInt64])
    func noPolicyEverFetchesWhereAConstraintFails(seed: UInt64) throws {
        var t = randomTrace(seed: seed, events: 1500)
        var rng = SeededGenerator(seed: seed &* 31)
        // A random state layer per device.
        let last = t.events.map(\.timeMicros).max()!
        let first = t.events.map(\.timeMicros).min()!
        for d in 0..<4 {
            var micros = first
            while micros < last {
                micros += Int64.random(in: 600...14_400, using: &rng) * 1_000_000
                let change = ConditionChange(
                    network: [nil, .wifi, .cellular, .offline].randomElement(using: &rng)!,
                    power: [nil, .charging, .battery].randomElement(using: &rng)!,
                    battery: Bool.random(using: &rng) ? UInt8.random(in: 0...100, using: &rng) : nil,
                    lowPower: [nil, true, false].randomElement(using: &rng)!)
                if change.isEmpty { continue }
                t.events.append(TraceEvent(timeMicros: micros, utcOffsetSeconds: 0, device: "dev\(d)", app: "", kind: .state, conditions: change))
            }
        }
        t.events.sort { $0.timeMicros < $1.timeMicros }
        var timelines: [String: ConditionTimeline] = [:]
        for e in t.events where e.kind == .state { timelines[e.device, default: ConditionTimeline()].append(e.conditions, atMicros: e.timeMicros) }
        let constraints = FetchConstraints(
            apps: ["*": AppConstraints(network: .unmetered), "c.chat": AppConstraints(network: .any, charging: true, batteryNotLow: true)],
            system: .ios)
        let e = try evaluate(t, policies: ReplayPropertyTests.policies, budgets: [12], constraints: constraints)
        var blocked = 0
        var deferred = 0
        for (i, row) in e.summary.enumerated() where row.policy != "none" {
            #expect(!e.fetchRecords[i].isEmpty, "\(row.policy) made no fetch")
            blocked += row.metrics.blockedFetches
            // The condition-aware scheduler keeps to the constraints itself: it never asks for
            // a fetch the replay has to drop.
            if row.policy == "learned" { #expect(row.metrics.blockedFetches == 0) }
            // The oracle fetches only where they allow; the others' blocked fetches may wait.
            if row.policy == "oracle" { #expect(row.metrics.blockedFetches == 0) }
            deferred += row.metrics.deferredFetches
            for f in e.fetchRecords[i] {
                let conditions = timelines[e.deviceNames[f.device]]?.conditions(at: f.time) ?? .unknown
                #expect(constraints.allows(app: e.appNames[Int(f.app)], under: conditions),
                        "\(row.policy) fetched \(e.appNames[Int(f.app)]) at \(f.time) under \(conditions)")
            }
        }
        #expect(blocked > 0 && deferred > 0)
    }
}
