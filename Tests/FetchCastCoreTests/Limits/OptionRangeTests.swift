import FetchCastCore
import Testing

struct OptionRangeTests {
    @Test(arguments: [
        (Double.infinity, Int.max), (-Double.infinity, Int.min), (Double.nan, 0), (1e19, Int.max), (0x1p63, Int.max),
        (-0x1p63, Int.min), (-1e19, Int.min), (3.7, 3), (-3.7, -3), (1440, 1440),
    ])
    func saturatingConversionNeverTraps(value: Double, expected: Int) {
        #expect(Int(saturating: value) == expected)
    }

    @Test func theMessageNamesTheOptionTheRangeWhyAndTheValue() {
        #expect(Limits.budget.message(name: "--budget", got: "inf")
            == "--budget must be between 1 and 1440, fetches a day (at most one a minute) (got inf)")
        #expect(Limits.count.message(name: "count", got: "-1") == "count must be between 1 and 1000 (got -1)")
        #expect(throws: OptionRangeError.self) { try Limits.budget.check(.nan, name: "budget") }
        #expect(throws: OptionRangeError.self) { try Limits.budget.check(1440.5, name: "budget") }
        #expect((try? Limits.budget.check(1440, name: "budget")) == 1440)
        #expect((try? Limits.budget.check(1, name: "budget")) == 1)
    }
}
