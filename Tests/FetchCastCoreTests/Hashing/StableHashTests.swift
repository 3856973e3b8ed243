@testable import FetchCastCore
import Testing

struct StableHashTests {
    /// FNV-1a 64 test vectors (Fowler, Noll, Vo: the reference implementation's test suite).
    @Test(arguments: [("", 0xcbf2_9ce4_8422_2325 as UInt64), ("a", 0xaf63_dc4c_8601_ec8c), ("foobar", 0x8594_4171_f739_67e8)])
    func isFNV1a(_ text: String, _ expected: UInt64) {
        #expect(StableHash.of(text.utf8) == expected)
        // Contiguous bytes go through their buffer, others a byte at a time: the same hash.
        #expect(StableHash.of(Array(text.utf8)) == expected)
        #expect(StableHash.of(AnySequence(text.utf8)) == expected)
        var streamed = StableHash()
        for b in text.utf8 { streamed.add(b) }
        #expect(streamed.value == expected)
    }

    /// The word-at-a-time tag of saved sums: pinned (computed independently, in Python, from its
    /// definition), since stores hold it.
    @Test func theWordVariantIsPinned() {
        let bytes = Array("the population's sums, 8 bytes a word".utf8)  // 4 words and a 5-byte tail
        #expect(bytes.withUnsafeBytes { StableHash.ofWords($0) } == 0xdc07_601e_f53a_878f)
        #expect([UInt8]().withUnsafeBytes { StableHash.ofWords($0) } == 0xcbf2_9ce4_8422_2325)
    }
}
