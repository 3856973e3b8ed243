/// FNV-1a, 64 bits: a hash that is the same on every platform, run and version (unlike
/// `Hasher`, seeded per process), for what is saved or must be reproduced: the symbol tables'
/// slots, the keys of saved schedulers, the tags of saved sums, the conditions a generator
/// draws for a device. One definition, so that every one of them stays what stores already hold.
package struct StableHash: Sendable {
    /// FNV-1a's 64-bit offset basis and prime.
    @usableFromInline static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    @usableFromInline static let prime: UInt64 = 0x0000_0100_0000_01b3

    /// The hash of what was added so far.
    @usableFromInline package private(set) var value: UInt64

    /// An empty hash (FNV-1a's offset basis, or it mixed with `seed`).
    @inlinable package init(seed: UInt64 = 0) {
        value = Self.offsetBasis ^ seed
    }

    /// Adds one byte.
    @inlinable @inline(__always) package mutating func add(_ byte: UInt8) {
        value = (value ^ UInt64(byte)) &* Self.prime
    }

    /// Adds bytes in order: a contiguous collection (an array, a native string's UTF-8) through
    /// its buffer, since the generic iteration, left unspecialised across modules, took most of
    /// the time of a plan answered ahead (the key of its plan table hashes about 2 KB).
    @inlinable package mutating func add(_ bytes: some Sequence<UInt8>) {
        if bytes.withContiguousStorageIfAvailable({ add(buffer: $0) }) != nil { return }
        for b in bytes { add(b) }
    }

    /// Adds the bytes of a buffer in order.
    @inlinable package mutating func add(buffer: UnsafeBufferPointer<UInt8>) {
        var h = value
        for b in buffer { h = (h ^ UInt64(b)) &* Self.prime }
        value = h
    }

    /// FNV-1a of `bytes`.
    @inlinable package static func of(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var h = StableHash()
        h.add(bytes)
        return h.value
    }

    /// A word-at-a-time variant for megabytes (about 8 times faster than a byte at a time):
    /// the length as seed, each little-endian 64-bit word multiplied in and folded (`h ^= h >> 29`),
    /// the tail a byte at a time; never 0 (0 may mean "no tag" to a caller).
    package static func ofWords(_ raw: UnsafeRawBufferPointer) -> UInt64 {
        var h = StableHash(seed: UInt64(raw.count)).value
        var i = 0
        while i + 8 <= raw.count {
            h = (h ^ raw.loadUnaligned(fromByteOffset: i, as: UInt64.self).littleEndian) &* prime
            h ^= h >> 29
            i += 8
        }
        while i < raw.count {
            h = (h ^ UInt64(raw[i])) &* prime
            i += 1
        }
        return h == 0 ? 1 : h
    }
}
