import FetchCastTrace
import Testing
@testable import FetchCastReplay

struct IntervalPolicyTests {
    @Test func pollsEveryPeriodFromTheFirstLaunchUntilTheLastLaunch() throws {
        var t = Trace()
        t.launch("x", at: 0)
        t.launch("x", at: 7210)
        let e = try evaluate(t, policies: ["interval"], budgets: [24], topApps: 1)
        // T = 86400·1/24 = 3600: polls at 3600 and 7200 (10800 is after the last launch).
        #expect(e.fetchRecords[0].map(\.time) == [t.at(3600), t.at(7200)])
        let m = e.row("interval")
        #expect(m.needyLaunches == 1)
        #expect(m.freshNeedyLaunches == 1)
        #expect(e.launchRecords[0].first?.staleness == 10)
        #expect(m.wakeups == 2)
        #expect(abs(m.joules - 2 * (0.26 * 1.21 + 2.0 * 1.2 + 11.5 * 1.06)) < 1e-9)
    }

    @Test func simultaneousPollsGoByAppIdAndAreNeverCapped() throws {
        var t = Trace()
        t.launch("b", at: 0)
        t.launch("a", at: 0)
        t.launch("a", at: 172_900)
        t.launch("b", at: 172_900)
        // B = 1, k = 2: T = 172800; both apps are due at 172800, on the same local day. v1 polls
        // both (B a day on average, by construction): the engine refuses none.
        let e = try evaluate(t, policies: ["interval"], budgets: [1])
        #expect(e.fetchRecords[0].map { e.appNames[Int($0.app)] } == ["a", "b"])
        #expect(e.fetchRecords[0].map(\.time) == [t.at(172_800), t.at(172_800)])
        #expect(e.row("interval").refusedFetches == 0)
        #expect(e.launchRecords[0].map(\.fresh) == [true, true])
    }
}

struct OraclePolicyTests {
    @Test func capCountsNeedyLaunchesByTheLaunchsLocalDay() throws {
        var t = Trace(offset: 7200)  // +02:00: local 23:20 and 00:10 are the same UTC day
        t.launch("x", at: 0)
        t.launch("x", at: 84_000)  // day 0, 23:20, needy
        t.launch("x", at: 87_000)  // day 1, 00:10, needy (3000 s later)
        t.launch("x", at: 129_600)  // day 1, 12:00, needy, over the cap of 1
        let e = try evaluate(t, policies: ["oracle"], budgets: [1.5])
        #expect(e.fetchRecords[0].map(\.time) == [t.at(84_000) - 1, t.at(87_000) - 1])
        let m = e.row("oracle")
        #expect(m.needyLaunches == 3)
        #expect(m.freshNeedyLaunches == 2)
    }

    @Test func aFetchBeforeMidnightCountsOnTheLaunchsDay() throws {
        var t = Trace()
        t.launch("x", at: 0)
        t.launch("x", at: 43_200)
        t.launch("x", at: 86_400.5)  // its fetch is at 23:59:59.5 of day 0
        let e = try evaluate(t, policies: ["oracle"], budgets: [1])
        #expect(e.row("oracle").fetches == 2)
        #expect(e.row("oracle").freshNeedyLaunches == 2)
    }

    @Test func tiesAcrossAppsGoByAppId() throws {
        var t = Trace()
        t.launch("b", at: 0)
        t.launch("a", at: 0)
        t.launch("b", at: 7200)
        t.launch("a", at: 7200)
        let e = try evaluate(t, policies: ["oracle"], budgets: [1])
        #expect(e.fetchRecords[0].map { e.appNames[Int($0.app)] } == ["a"])
        #expect(e.row("oracle").hitRate == 0.5)
    }
}

struct HourlyPolicyTests {
    @Test func fetchesAtTheStartOfLocalHoursWithPastLaunches() throws {
        var t = Trace(offset: 3600)
        t.launch("x", at: 29_400)  // day 0, 08:10 local
        t.launch("x", at: 116_400)  // day 1, 08:20 local
        let e = try evaluate(t, policies: ["hourly"], budgets: [24])
        #expect(e.fetchRecords[0].map(\.time) == [t.at(115_200)])  // day 1, 08:00 local
        #expect(e.launchRecords[0].first?.staleness == 1200)
        #expect(e.row("hourly").hitRate == 1)
    }

    @Test func onlyTheTopBudgetPairsAreFetched() throws {
        var t = Trace()
        t.launch("a", at: 8 * 3600 + 600)
        t.launch("a", at: 8 * 3600 + 2400)
        t.launch("b", at: 9 * 3600 + 600)
        t.launch("a", at: 86_400 + 8 * 3600 + 1800)
        t.launch("b", at: 86_400 + 9 * 3600 + 1800)
        let e = try evaluate(t, policies: ["hourly"], budgets: [1])
        // (a, 08h) has 2 launches, (b, 09h) 1: with ⌊B⌋ = 1 only a is fetched, at day 1 08:00.
        #expect(e.fetchRecords[0].map(\.time) == [t.at(86_400 + 8 * 3600)])
        #expect(e.fetchRecords[0].map { e.appNames[Int($0.app)] } == ["a"])
    }
}
