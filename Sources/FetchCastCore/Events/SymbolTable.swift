/// Interns byte strings (device and app ids) as dense `Int32` symbols without allocating a
/// `String` per lookup.
///
/// Open addressing with linear probing over FNV-1a hashes; names live in one byte arena.
/// Devices and apps share one table: a symbol is just a name.
///
/// - Complexity: `intern` is O(length of the name) expected.
package final class SymbolTable {
    private var arena: [UInt8] = []
    private var starts: [Int] = [0]
    private var slots: [Int32]
    private var hashes: [UInt64] = []
    private var names: [String] = []

    /// Creates an empty table.
    package init() {
        slots = Array(repeating: -1, count: 1024)
    }

    /// How many distinct names the table holds.
    package var count: Int { names.count }

    /// The name of a symbol.
    package func name(_ symbol: Int32) -> String { names[Int(symbol)] }

    /// Every name, indexed by symbol.
    package var allNames: [String] { names }

    /// The symbol of a name already interned, or `nil`.
    package func lookup(_ name: String) -> Int32? {
        var name = name
        return name.withUTF8 { find(UnsafeRawBufferPointer($0), hash: Self.hash(UnsafeRawBufferPointer($0))) }
    }

    /// The symbol of a name, adding it if new.
    package func intern(_ name: String) -> Int32 {
        var name = name
        return name.withUTF8 { intern(UnsafeRawBufferPointer($0)) }
    }

    /// The symbol of a name given as UTF-8 bytes, adding it if new.
    package func intern(_ bytes: UnsafeRawBufferPointer) -> Int32 {
        let h = Self.hash(bytes)
        if let found = find(bytes, hash: h) { return found }
        let symbol = Int32(names.count)
        arena.append(contentsOf: bytes)
        starts.append(arena.count)
        hashes.append(h)
        names.append(String(decoding: bytes, as: UTF8.self))
        if names.count * 2 > slots.count { rehash(capacity: slots.count * 2) } else { place(symbol, hash: h) }
        return symbol
    }

    private func find(_ bytes: UnsafeRawBufferPointer, hash h: UInt64) -> Int32? {
        let mask = slots.count - 1
        var i = Int(truncatingIfNeeded: h) & mask
        while true {
            let s = slots[i]
            if s < 0 { return nil }
            if hashes[Int(s)] == h && equals(Int(s), bytes) { return s }
            i = (i + 1) & mask
        }
    }

    private func equals(_ symbol: Int, _ bytes: UnsafeRawBufferPointer) -> Bool {
        let start = starts[symbol], end = starts[symbol + 1]
        if end - start != bytes.count { return false }
        return arena.withUnsafeBytes { arenaBytes in
            bytes.count == 0 || memcmpBytes(arenaBytes.baseAddress! + start, bytes.baseAddress!, bytes.count)
        }
    }

    private func place(_ symbol: Int32, hash h: UInt64) {
        let mask = slots.count - 1
        var i = Int(truncatingIfNeeded: h) & mask
        while slots[i] >= 0 { i = (i + 1) & mask }
        slots[i] = symbol
    }

    private func rehash(capacity: Int) {
        slots = Array(repeating: -1, count: capacity)
        for s in 0..<names.count { place(Int32(s), hash: hashes[s]) }
    }

    @inline(__always)
    private static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let h = StableHash.of(bytes)
        return h ^ (h >> 29)
    }
}

@inline(__always)
private func memcmpBytes(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ n: Int) -> Bool {
    for i in 0..<n where a.load(fromByteOffset: i, as: UInt8.self) != b.load(fromByteOffset: i, as: UInt8.self) {
        return false
    }
    return true
}
