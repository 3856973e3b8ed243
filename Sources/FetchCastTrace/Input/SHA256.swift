import Crypto

/// SHA-256, streamed: the content hash the store keys files by and `run.json` records for every
/// input. A thin wrapper over swift-crypto (BoringSSL's implementation, SHA extensions where the
/// CPU has them), so that every hashing site reads the same and digests are hex text.
/// `fetchcast bench sha256` measures it against the hand-written Swift SHA-256 this replaced.
public struct SHA256: Sendable {
    private var hasher = Crypto.SHA256()

    /// Creates a hasher with no input.
    public init() {}

    /// Adds bytes to the message.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        hasher.update(bufferPointer: bytes)
    }

    /// Adds bytes to the message.
    public mutating func update<C: Collection<UInt8>>(_ bytes: C) {
        Array(bytes).withUnsafeBytes { update($0) }
    }

    /// The digest of the bytes so far as 64 lowercase hex digits; more bytes may follow.
    public func hexDigest() -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for byte in hasher.finalize() {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The digest of `bytes` as hex.
    public static func hex<C: Collection<UInt8>>(of bytes: C) -> String {
        var h = SHA256()
        h.update(bytes)
        return h.hexDigest()
    }
}
