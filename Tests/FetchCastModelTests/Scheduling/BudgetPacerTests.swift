import FetchCastModel
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
}
