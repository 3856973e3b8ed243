/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014):
/// a small seeded generator, so generated traces, condition layers and test cases are the same
/// on every run (equal seeds give equal sequences).
package struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64
    /// Creates a generator from a seed.
    package init(seed: UInt64) { state = seed }
    /// The next 64 random bits.
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension SplitMix64 {
    /// A uniform real in [0, 1) from the top 53 bits.
    package mutating func unit() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }
}
