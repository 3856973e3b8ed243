import Crypto

/// The id of a device or app name in a PostgreSQL event log: the first 63 bits of the SHA-256
/// of its UTF-8 bytes (never 0, which stands for every device).
///
/// An id every process computes alike needs no shared counter, so appends to different shards
/// never wait on one another for an id; the append checks each stored id holds its own name.
/// Names that only look alike (case, Unicode normalisation, a trailing space) have different
/// bytes, hence different ids.
enum NameID {
    /// The device id of a publish to every device.
    static let everyDevice: Int64 = 0

    static func of(_ name: String) -> Int64 {
        let digest = SHA256.hash(data: Array(name.utf8))
        var value: UInt64 = 0
        for byte in digest.prefix(8) { value = value << 8 | UInt64(byte) }
        let id = Int64(bitPattern: value & 0x7fff_ffff_ffff_ffff)
        return id == 0 ? 1 : id
    }
}
