@testable import FetchCastModel
import Testing

struct BudgetPacerTests {
    /// A pacer that saw `days` identical days with opportunities of values `values` at each hour.
    func pacer(days: Int, values: [Double]) -> BudgetPacer {
        var p = BudgetPacer(memory: 0.9)
        for day in 0..<days {
            p.startDay(day)
            for hour in 0..<24 { for v in values { p.record(value: v, hour: hour) } }
        }
        p.startDay(days)
        return p
    }

    @Test func withoutHistoryTheBarIsTheFloor() {
        let p = BudgetPacer(memory: 0.9)
        #expect(p.threshold(hour: 0, remaining: 24, floor: 0.05) == 0.05)
        #expect(p.threshold(hour: 0, remaining: 0, floor: 0.05) == .infinity)
    }

    @Test func aUsualDayCountsItsOpportunitiesWorthAValue() throws {
        #expect(BudgetPacer(memory: 0.9).usualDayOpportunities(atLeast: 0.05) == nil)
        // Ten days of three opportunities an hour, one of them below 0.05.
        let p = pacer(days: 10, values: [0.02, 0.1, 0.4])
        let usual = try #require(p.usualDayOpportunities(atLeast: 0.05))
        #expect(abs(usual - 48) < 1e-9, "\(usual)")
        #expect(abs(try #require(p.usualDayOpportunities(atLeast: 0.01)) - 72) < 1e-9)
    }

    @Test func fewerFetchesLeftRaiseTheBar() {
        let p = pacer(days: 10, values: [0.05, 0.1, 0.2, 0.4, 0.8])
        let generous = p.threshold(hour: 0, remaining: 200, floor: 0.01)
        let tight = p.threshold(hour: 0, remaining: 10, floor: 0.01)
        #expect(generous <= tight)
        // 24 hours × 1 opportunity at ≥ 0.8: ten fetches cannot cover them, so the bar sits at the top.
        #expect(tight > 0.4)
        #expect(generous <= 0.05 + 1e-9)
    }

    @Test func laterInTheDayFewerOpportunitiesRemain() {
        let p = pacer(days: 10, values: [0.1, 0.3, 0.6])
        let morning = p.threshold(hour: 0, remaining: 12, floor: 0.01)
        let evening = p.threshold(hour: 20, remaining: 12, floor: 0.01)
        #expect(evening <= morning)
    }

    @Test func aBusyDayRaisesTheBar() {
        var busy = pacer(days: 10, values: [0.1, 0.3, 0.6])
        let usual = busy.threshold(hour: 12, remaining: 12, floor: 0.01)
        for hour in 0...12 { for _ in 0..<9 { busy.record(value: 0.3, hour: hour) } }
        #expect(busy.threshold(hour: 12, remaining: 12, floor: 0.01) >= usual)
    }

    /// Opportunities of one hour, as counted so far today.
    func countsToday(_ p: BudgetPacer, hour: Int) -> [Double] {
        Array(p.today[(hour * BudgetPacer.bins)..<((hour + 1) * BudgetPacer.bins)])
    }

    @Test func looksAtOneAppWithinTheWindowAreOneOpportunityAtTheirBestValue() {
        var p = BudgetPacer(memory: 0.9)
        p.startDay(0)
        // A burst: the same app looked at five times in two minutes, rising in value.
        for (i, v) in [0.05, 0.2, 0.1, 0.4, 0.3].enumerated() {
            p.record(value: v, hour: 9, app: 7, time: 1000 + Double(i) * 30, window: 900)
        }
        let counts = countsToday(p, hour: 9)
        #expect(counts.reduce(0, +) == 1)
        #expect(counts[BudgetPacer.bin(0.4)] == 1)
    }

    @Test func anotherAppOrALaterLookIsAnotherOpportunity() {
        var p = BudgetPacer(memory: 0.9)
        p.startDay(0)
        p.record(value: 0.2, hour: 9, app: 1, time: 1000, window: 900)
        p.record(value: 0.2, hour: 9, app: 2, time: 1010, window: 900)
        p.record(value: 0.2, hour: 9, app: 1, time: 1900, window: 900)
        #expect(countsToday(p, hour: 9).reduce(0, +) == 3)
    }

    @Test func aBetterLookInTheNextHourCountsInItsOwnHourOnly() {
        var p = BudgetPacer(memory: 0.9)
        p.startDay(0)
        p.record(value: 0.1, hour: 9, app: 1, time: 3500, window: 900)
        p.record(value: 0.5, hour: 10, app: 1, time: 3700, window: 900)
        // The window's count stays where it was opened: one opportunity in all.
        #expect(countsToday(p, hour: 9).reduce(0, +) == 1)
        #expect(countsToday(p, hour: 10).reduce(0, +) == 0)
    }

    @Test func aWindowOpenedYesterdayDoesNotHideTodaysFirstLook() {
        var p = BudgetPacer(memory: 0.9)
        p.startDay(0)
        p.record(value: 0.2, hour: 23, app: 1, time: 86_000, window: 900)
        p.startDay(1)
        // 10 minutes later, after midnight: inside yesterday's window, but a new day.
        p.record(value: 0.2, hour: 0, app: 1, time: 86_600, window: 900)
        #expect(countsToday(p, hour: 0).reduce(0, +) == 1)
    }
}

