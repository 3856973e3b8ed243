import FetchCastCore
import FetchCastModel
import FetchCastTrace
import Testing
@testable import FetchCastReplay
import FetchCastTestSupport

/// Rule 7 under constraints, on hand-computed tiny traces: a blocked fetch waits for the
/// constraints (as an OS runs constrained work), and the oracle fetches at the latest moment
/// they allow.
struct ConstraintWaitTests {
    private let unmetered = FetchConstraints(apps: ["*": AppConstraints(network: .unmetered)])

    /// Launches of `a` at 0, 2500 and 7200 s; cellular from 100 s, Wi-Fi from `wifi` s.
    private func trace(wifi: Double = 2000) -> Trace {
        var t = Trace()
        t.launch("a", at: 0)
        t.state(ConditionChange(network: .cellular), at: 100)
        t.state(ConditionChange(network: .wifi), at: wifi)
        t.launch("a", at: 2500)
        t.launch("a", at: 7200)
        return t
    }

    @Test func aBlockedFetchIsMadeWhenTheConstraintsComeToAllowIt() throws {
        let t = trace()
        let e = try evaluate(t, policies: ["scripted"], registry: scripted(t, [(1000, "a")]), constraints: unmetered)
        let m = e.row("scripted")
        #expect(m.blockedFetches == 1 && m.deferredFetches == 1 && m.fetches == 1 && m.cellularFetches == 0)
        // Made at the Wi-Fi row's instant, so the launch at 2500 s is fresh.
        #expect(e.fetchRecords[0].map(\.time) == [t.at(2000)])
        #expect(m.freshNeedyLaunches == 1)
        // Without the constraint it is made when asked.
        let free = try evaluate(t, policies: ["scripted"], registry: scripted(t, [(1000, "a")])).row("scripted")
        #expect(free.blockedFetches == 0 && free.deferredFetches == 0 && free.cellularFetches == 1)
    }

    @Test func oneFetchPerAppWaits() throws {
        let t = trace()
        let e = try evaluate(t, policies: ["scripted"], registry: scripted(t, [(1000, "a"), (1500, "a")]), constraints: unmetered)
        let m = e.row("scripted")
        #expect(m.blockedFetches == 2 && m.deferredFetches == 1 && m.fetches == 1)
    }

    @Test func noFetchWaitsPastTheDevicesLastLaunch() throws {
        var t = trace(wifi: 8000)
        t.events.sort { $0.timeMicros < $1.timeMicros }
        let m = try evaluate(t, policies: ["scripted"], registry: scripted(t, [(1000, "a")]), constraints: unmetered).row("scripted")
        #expect(m.blockedFetches == 1 && m.deferredFetches == 0 && m.fetches == 0)
    }

    @Test func aWaitingFetchComesBeforeThePolicysOwnAtThatInstantAndCountsAgainstTheCap() throws {
        var t = trace()
        t.launch("b", at: 50)
        t.events.sort { $0.timeMicros < $1.timeMicros }
        let registry = scripted(t, [(1000, "a"), (2000, "b")])
        let e = try evaluate(t, policies: ["scripted"], budgets: [1], registry: registry, constraints: unmetered)
        let m = e.row("scripted")
        #expect(m.deferredFetches == 1 && m.fetches == 1 && m.refusedFetches == 1)
        #expect(e.fetchRecords[0].map(\.app) == [0])  // `a`, made first; `b` is over the cap of 1
    }

    @Test func theOracleFetchesAtTheLatestMomentTheConstraintsAllow() throws {
        // Wi-Fi from 500 s to 2000 s; the launch at 3000 s looks back to 1200 s.
        var t = Trace()
        t.launch("a", at: 0)
        t.state(ConditionChange(network: .wifi), at: 500)
        t.state(ConditionChange(network: .cellular), at: 2000)
        t.launch("a", at: 3000)
        let e = try evaluate(t, policies: ["oracle"], constraints: unmetered)
        #expect(e.fetchRecords[0].map(\.time) == [t.at(1999)])
        #expect(e.row("oracle").hitRate == 1 && e.row("oracle").blockedFetches == 0)
        let free = try evaluate(t, policies: ["oracle"])
        #expect(free.fetchRecords[0].map(\.time) == [t.at(2999)])
    }

    @Test func theOraclesCapCountsOnlyLaunchesItCanMakeFresh() throws {
        // Cap 1: the launch at 3000 s has no Wi-Fi in the τ before it, the one at 6000 s has.
        var t = Trace()
        t.launch("a", at: 0)
        t.state(ConditionChange(network: .cellular), at: 100)
        t.launch("a", at: 3000)
        t.state(ConditionChange(network: .wifi), at: 5000)
        t.launch("a", at: 6000)
        let e = try evaluate(t, policies: ["oracle"], budgets: [1], constraints: unmetered)
        #expect(e.fetchRecords[0].map(\.time) == [t.at(5999)])
        let m = e.row("oracle")
        #expect(m.needyLaunches == 2 && m.freshNeedyLaunches == 1 && m.blockedFetches == 0)
    }

    @Test func latestAllowedInstants() {
        var timeline = ConditionTimeline()
        let wifi = ConditionChange(network: .wifi), cellular = ConditionChange(network: .cellular)
        for (s, change) in [(100.0, wifi), (200.0, cellular), (300.0, wifi), (300.5, cellular), (1000.0, wifi)] {
            timeline.append(change, atMicros: Int64(s * 1_000_000))
        }
        let onWiFi: (DeviceConditions) -> Bool = { $0.isUnmetered }
        #expect(timeline.latestInstant(from: 0, through: 1500, where: onWiFi) == 1500)  // on Wi-Fi at the end
        #expect(timeline.latestInstant(from: 0, through: 999, where: onWiFi) == 300)  // a run shorter than 1 s: its start
        #expect(timeline.latestInstant(from: 0, through: 299, where: onWiFi) == 199)
        #expect(timeline.latestInstant(from: 199.5, through: 299, where: onWiFi) == 199.5)  // the window's start
        #expect(timeline.latestInstant(from: 200, through: 299, where: onWiFi) == nil)
        #expect(timeline.latestInstant(from: 0, through: 99, where: onWiFi) == nil)  // unknown counts as cellular
        #expect(timeline.latestInstant(from: 0, through: 99, where: { _ in true }) == 99)
    }
}
