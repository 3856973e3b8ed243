import FetchCastCore
import FetchCastTrace
import Testing
@testable import FetchCastReplay

/// Hand-computed tiny traces, one or more per rule of the v1 semantics.
struct ReplaySemanticsTests {
    @Test func tauBoundaryFirstLaunchTiesAndStalenessCap() throws {
        var t = Trace()
        for s in [0.0, 1800, 3601, 3601, 203_601] { t.launch("x", at: s) }
        let e = try evaluate(t)
        let m = e.row("none")
        #expect(m.devices == 1)
        #expect(m.launches == 5)
        #expect(m.scoredLaunches == 4)  // the first launch is not scored
        #expect(m.needyLaunches == 2)  // 3601 (1801 s after) and 203601; 1800 is not > τ
        #expect(m.freshLaunches == 2)  // 1800 (= τ) and the tie at 3601 (staleness 0)
        #expect(m.freshNeedyLaunches == 0)
        #expect(m.stalenessSeconds == 1800 + 1801 + 0 + 86_400)
        #expect(MetricsTable.values(m)[12] == "375.004")  // mean_staleness_min
        #expect(MetricsTable.values(m)[1] == "2.356")  // device_days = 203601 / 86400
        let records = e.launchRecords[0]
        #expect(records.map(\.needy) == [false, true, false, true])
        #expect(records.map(\.fresh) == [true, false, true, false])
    }

    @Test func topAppsTieBreaksByAppIdInByteOrder() throws {
        var t = Trace()
        // "B" (0x42) sorts before "a" (0x61): with K = 1 and equal counts, B is fetch-enabled.
        for s in [0.0, 4000] { t.launch("a", at: s); t.launch("B", at: s + 1) }
        t.fetch("z", at: 10, device: "no-launches")
        let e = try evaluate(t, topApps: 1)
        let m = e.row("none")
        #expect(m.devices == 1)  // a device with no launch is not a device
        #expect(m.launches == 2)
        #expect(e.launchRecords[0].allSatisfy { e.appNames[Int($0.app)] == "B" })
        // device_days counts launches of every app: 0 … 4001.
        #expect(m.deviceDays == 4001.0 / 86_400)
    }

    @Test func inputFetchEventsNeverRefreshNorCount() throws {
        var t = Trace()
        t.launch("x", at: 0)
        t.fetch("x", at: 7000, result: .newData)
        t.launch("x", at: 7200)
        let e = try evaluate(t, policies: ["none", "interval"], budgets: [1])
        #expect(e.launchRecords[0].map(\.staleness) == [7200])
        #expect(e.row("none").fetches == 0)
        #expect(e.row("none").joules == 0)
    }

    @Test func wakeupsAtAnInstantComeBeforeLaunchesAtIt() throws {
        var t = Trace()
        t.launch("x", at: 0)
        t.launch("x", at: 7200)
        let e = try evaluate(t, policies: ["scripted"], registry: scripted(t, [(7200, "x")]))
        let launch = try #require(e.launchRecords[0].first)
        #expect(launch.staleness == 0)
        #expect(launch.coveringFetch == 1)
        #expect(launch.fresh && launch.needy)
    }

    @Test func fetchResultsFollowPublishesAfterTheLastRefresh() throws {
        var t = Trace()
        t.launch("x", at: 0)
        t.launch("x", at: 0, device: "d2")
        t.publish("x", at: 100)  // empty device: every device
        t.launch("x", at: 5000)
        t.launch("x", at: 5000, device: "d2")
        let e = try evaluate(t, policies: ["scripted"], registry: scripted(t, [(50, "x"), (100, "x"), (200, "x")]))
        // 50: nothing since the launch at 0; 100: the publish at 100 comes first; 200: refreshed at 100.
        let results = e.fetchRecords[0].filter { $0.device == 0 }.map(\.result)
        #expect(results == [.noData, .newData, .noData])
        #expect(e.row("scripted").newDataFetches == 2)  // one per device
        #expect(e.row("scripted").noDataFetches == 4)
    }

    @Test func appsWithoutPublishesAlwaysHaveNewData() throws {
        var t = Trace()
        t.launch("x", at: 0)
        t.launch("x", at: 5000)
        let e = try evaluate(t, policies: ["scripted"], registry: scripted(t, [(50, "x"), (60, "x")]))
        #expect(e.fetchRecords[0].map(\.result) == [.newData, .newData])
    }

    @Test func contentFreshMeansEveryPublishOlderThanTauIsHeld() throws {
        var t = Trace()
        t.launch("x", at: 0)
        t.publish("x", at: 100)
        t.launch("x", at: 1000)  // the publish is 900 s old (< τ): not required → content-fresh
        t.launch("x", at: 5000)  // refreshed at 1000, after the publish → content-fresh
        t.publish("x", at: 6000)
        t.launch("x", at: 9000)  // publish 3000 s old, cache from 5000 → not content-fresh
        let e = try evaluate(t)
        #expect(e.launchRecords[0].map(\.contentFresh) == [true, true, false])
        #expect(e.row("none").contentFreshLaunches == 2)
    }

    @Test func publishesToOneDeviceStayOnIt() throws {
        var t = Trace()
        t.launch("x", at: 0)
        t.launch("x", at: 0, device: "d2")
        t.publish("x", at: 100, device: "d1")
        t.launch("x", at: 5000)
        t.launch("x", at: 5000, device: "d2")
        let e = try evaluate(t, policies: ["scripted"], registry: scripted(t, [(200, "x")]))
        #expect(e.fetchRecords[0].map(\.result) == [.newData, .noData])
    }

    @Test func aPolicyReactingAtTheLaunchInstantIsRejected() throws {
        var t = Trace()
        t.launch("x", at: 0)
        t.launch("x", at: 5000)
        var r = PolicyRegistry.standard
        r.register("eager") { _ in EagerPolicy() }
        #expect(throws: EvaluationError.self) { try evaluate(t, policies: ["eager"], registry: r) }
    }

    @Test func fetchesForAppsThatAreNotFetchEnabledAreRefused() throws {
        var t = Trace()
        t.launch("x", at: 0)
        t.launch("x", at: 10)
        t.launch("y", at: 20)
        t.launch("x", at: 5000)
        let e = try evaluate(t, policies: ["scripted"], topApps: 1, registry: scripted(t, [(100, "y"), (200, "x")]))
        #expect(e.row("scripted").fetches == 1)
        #expect(e.row("scripted").refusedFetches == 1)
    }

    @Test func wakeupsStopAtTheDevicesLastLaunch() throws {
        var t = Trace()
        t.launch("x", at: 0)
        t.launch("x", at: 100)
        t.fetch("x", at: 9000)  // events after the last launch are observed, but no wakeup runs there
        let e = try evaluate(t, policies: ["scripted"], registry: scripted(t, [(100, "x"), (101, "x")]))
        #expect(e.row("scripted").fetches == 1)
    }
}
