// What FetchCastTrace uses of swift-crypto, as a stand-in for the fuzz build (scripts/fuzz.sh
// compiles the trace reader with swiftc, without SwiftPM's dependency graph). It is a real
// SHA-256: the hand-written one `fetchcast bench sha256` checks against swift-crypto
// (Sources/FetchCastBench/HandWrittenSHA256.swift, compiled into this module), so that the
// fuzzer's check "the content hash is the hash of the raw bytes" fails when the reader hashes
// a byte twice, skips one or hashes decompressed text. Never part of the package.
public struct SHA256: Sendable {
    private var hasher = HandWrittenSHA256()

    public init() {}

    public mutating func update(bufferPointer: UnsafeRawBufferPointer) { hasher.update(bufferPointer) }

    public func finalize() -> [UInt8] {
        let hex = Array(hasher.hexDigest().utf8)
        func nibble(_ c: UInt8) -> UInt8 { c <= 57 ? c - 48 : c - 87 }
        return stride(from: 0, to: hex.count, by: 2).map { nibble(hex[$0]) << 4 | nibble(hex[$0 + 1]) }
    }
}
