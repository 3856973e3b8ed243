import FetchCastCore
import Testing

struct NearestNameTests {
    @Test(arguments: [
        ("alex-pixel-7", ["alex-pixel7", "bob-phone"], "alex-pixel7"),
        ("news", ["com.acme.mail", "com.acme.news"], "com.acme.news"),
        ("predcit", ["ingest", "predict", "model"], "predict"),
        ("PHONE", ["phone", "tablet"], "phone"),
        ("19F", ["19_F", "20_M"], "19_F"),
    ])
    func suggestsTheClosestName(typed: String, candidates: [String], expected: String) {
        #expect(NearestName.suggestion(for: typed, among: candidates) == expected)
    }

    @Test(arguments: [
        ("tablet", ["phone", "watch"]),
        ("x", ["abc"]),
        ("", ["a"]),
        // Ending with the name but not as a component is no suggestion.
        ("ews", ["com.acme.news"]),
    ])
    func saysNothingWhenNothingIsClose(typed: String, candidates: [String]) {
        #expect(NearestName.suggestion(for: typed, among: candidates) == nil)
        #expect(NearestName.didYouMean(typed, among: candidates) == "")
    }

    @Test func tiesGoToTheFirstInNameOrder() {
        #expect(NearestName.suggestion(for: "cat", among: ["cot", "bat"]) == "bat")
    }
}
