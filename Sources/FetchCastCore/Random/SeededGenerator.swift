/// The seeded generator benchmarks (which cannot depend on test support) and the test-support
/// target use: ``SplitMix64``, the one copy, under the name the tests know.
package typealias SeededGenerator = SplitMix64
