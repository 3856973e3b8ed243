import FetchCastCore
import FetchCastStore
import FetchCastTrace

/// `fetchcast bench sha256`: FetchCast's content hash (swift-crypto) against the hand-written
/// Swift SHA-256 it replaced, on the same bytes in the same run, fed in 256 KiB chunks as
/// ``RawInput`` feeds it.
package enum SHA256Benchmark {
    /// One measurement.
    package struct Result: Sendable {
        /// Bytes hashed per run.
        package var bytes: Int
        /// Fastest run of swift-crypto, seconds.
        package var swiftCrypto: Double
        /// Fastest run of the hand-written implementation, seconds.
        package var handWritten: Double
        /// How many times faster swift-crypto is (above 1: faster).
        package var speedup: Double { handWritten / max(swiftCrypto, 1e-9) }
    }

    /// Hashes `megabytes` MiB of seeded bytes with each implementation `repeats` times.
    /// - Throws: ``TraceError`` when the two digests differ (the benchmark would compare
    ///   different work).
    /// - Complexity: O(megabytes × repeats).
    package static func run(megabytes: Int, repeats: Int) throws -> Result {
        var state: UInt64 = 0x5EED
        let bytes = (0..<(megabytes << 20)).map { _ -> UInt8 in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
        /// Hashes `bytes` in 256 KiB chunks and returns the digest and the seconds it took.
        func time(_ update: (UnsafeRawBufferPointer) -> Void, _ digest: () -> String) -> (String, Double) {
            let started = WallClock.monotonic()
            bytes.withUnsafeBytes { all in
                for chunk in stride(from: 0, to: all.count, by: 1 << 18) {
                    update(UnsafeRawBufferPointer(rebasing: all[chunk..<min(chunk + (1 << 18), all.count)]))
                }
            }
            let hex = digest()
            return (hex, WallClock.monotonic() - started)
        }
        var best = (crypto: Double.infinity, hand: Double.infinity)
        var digests = (crypto: "", hand: "")
        for _ in 0..<max(repeats, 1) {
            var ours = SHA256()
            let (crypto, cryptoSeconds) = time({ ours.update($0) }, { ours.hexDigest() })
            var theirs = HandWrittenSHA256()
            let (hand, handSeconds) = time({ theirs.update($0) }, { theirs.hexDigest() })
            digests = (crypto, hand)
            best = (min(best.crypto, cryptoSeconds), min(best.hand, handSeconds))
        }
        guard digests.crypto == digests.hand else {
            throw TraceError(file: "bench sha256", line: 0, column: 0, problem: .badValue(
                column: "digest", value: digests.crypto, expected: "the hand-written digest \(digests.hand)"))
        }
        return Result(bytes: bytes.count, swiftCrypto: best.crypto, handWritten: best.hand)
    }
}
