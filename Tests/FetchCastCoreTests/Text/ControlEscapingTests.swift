import FetchCastCore
import Testing

struct ControlEscapingTests {
    @Test func escapesOnlyControlCharacters() {
        #expect("plain é name.csv".escapingControlCharacters == "plain é name.csv")
        #expect("a\tb\rc\u{7F}\u{9B}\u{1B}[0m\n".escapingControlCharacters == "a\\tb\\rc\\u{7F}\\u{9B}\\e[0m\\n")
        #expect("back\\slash".escapingControlCharacters == "back\\slash")
    }
}
