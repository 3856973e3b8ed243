import Testing
import FetchCastCore

struct PluralTests {
    @Test(arguments: [
        (0, "0 events"), (1, "1 event"), (2, "2 events"), (-1, "-1 events"), (1_000_000, "1000000 events"),
    ])
    func agreesWithItsCount(n: Int, text: String) {
        #expect(Plural.count(n, "event") == text)
    }

    @Test func takesAnIrregularPluralAndAnyInteger() {
        #expect(Plural.count(Int64(1), "entry", plural: "entries") == "1 entry")
        #expect(Plural.count(UInt8(3), "entry", plural: "entries") == "3 entries")
        #expect(Plural.count(Int32(1), "rejected row") == "1 rejected row")
        #expect(Plural.noun(1, "device") == "device")
        #expect(Plural.noun(5, "device") == "devices")
    }
}
