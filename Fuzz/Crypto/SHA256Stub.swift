// What FetchCastTrace uses of swift-crypto, as a stand-in for the fuzz build (scripts/fuzz.sh
// compiles the trace reader with swiftc, without SwiftPM's dependency graph). The content hash
// is not what the fuzzer exercises: this one returns zeros. Never part of the package.
public struct SHA256: Sendable {
    public init() {}
    public mutating func update(bufferPointer: UnsafeRawBufferPointer) {}
    public func finalize() -> [UInt8] { [UInt8](repeating: 0, count: 32) }
}
