import FetchCastCore

/// The seeded generator tests use: FetchCastCore's SplitMix64, shared with the benchmarks.
package typealias SeededGenerator = FetchCastCore.SeededGenerator
