import Testing
import FetchCastTrace

struct CSVFieldTests {
    @Test(arguments: [
        ("plain", "plain"), ("a,b", "\"a,b\""), ("say \"hi\"", "\"say \"\"hi\"\"\""),
        ("two\nlines", "\"two\nlines\""), ("cr\r", "\"cr\r\""), ("", ""),
    ])
    func quotesOnlyWhenNeeded(value: String, escaped: String) {
        #expect(CSVField.escape(value) == escaped)
    }

    @Test func writesLinesTheReaderReadsBack() throws {
        let apps = ["plain", "a,b", "say \"hi\"", "",  "two\nlines"]
        var text = header
        for app in apps {
            text += CSVField.line(["2013-11-09T22:36:45Z", "d", app, "launch", "", "", ""])
        }
        let (trace, skipped) = try readTraceSkipping(text: text)
        #expect(trace.events.map(\.app) == ["plain", "a,b", "say \"hi\""])
        // The quoted line break reads back whole, as one field that an id may not hold.
        #expect(skipped.map(\.line) == [5, 6])
        #expect(skipped.map { caseName($0.problem) } == ["emptyValue", "controlCharacter"])
    }

    @Test(arguments: [
        (1.25, 1, "1.3"), (-0.04, 1, "0.0"), (-1.5, 0, "-2"), (2.0, 3, "2.000"), (0.5, 2, "0.50"),
        (Double.nan, 2, ""), (Double.infinity, 1, "inf"),
    ])
    func formatsFixedDecimals(value: Double, decimals: Int, text: String) {
        #expect(CSVField.fixed(value, decimals: decimals) == text)
    }
}
