import FetchCastCore
import FetchCastTrace

/// Per-file aggregates kept while ingesting, so `stats` never scans events: counts and time
/// span per (device, app, kind), and launches per (device, local day).
///
/// Open addressing on packed integer keys: one multiply-shift hash per event, no `Hasher`.
package struct IngestAggregates {
    package struct Count {
        package var n: Int64
        package var first: Int64
        package var last: Int64
    }

    private(set) var counts = PackedTable<Count>()
    private(set) var days = PackedTable<Int64>()

    /// No aggregates yet.
    package init() {}

    @inline(__always)
    static func countKey(device: Int32, app: Int32, kind: EventKind) -> UInt64 {
        UInt64(UInt32(bitPattern: device)) << 32 | UInt64(UInt32(bitPattern: app)) << 2 | UInt64(kind.rawValue)
    }

    @inline(__always)
    package mutating func add(_ e: EncodedEvent) {
        let key = Self.countKey(device: e.device, app: e.app, kind: e.kind)
        counts.update(key, default: Count(n: 0, first: e.timeMicros, last: e.timeMicros)) { c in
            c.n += 1
            if e.timeMicros < c.first { c.first = e.timeMicros }
            if e.timeMicros > c.last { c.last = e.timeMicros }
        }
        if e.kind == .launch {
            let day = LocalTime.day(micros: e.timeMicros, utcOffsetSeconds: e.utcOffsetSeconds)
            let dayKey = UInt64(UInt32(bitPattern: e.device)) << 32 | UInt64(UInt32(truncatingIfNeeded: day))
            days.update(dayKey, default: 0) { $0 += 1 }
        }
    }

    /// (device, app, kind, count) in key order, for deterministic inserts.
    package func countRows() -> [(device: Int32, app: Int32, kind: Int64, count: Count)] {
        counts.entries().sorted { $0.0 < $1.0 }.map { key, value in
            (Int32(bitPattern: UInt32(key >> 32)), Int32(bitPattern: UInt32(truncatingIfNeeded: key) >> 2),
             Int64(key & 3), value)
        }
    }

    /// (device, day, launches) in key order.
    package func dayRows() -> [(device: Int32, day: Int32, launches: Int64)] {
        days.entries().sorted { $0.0 < $1.0 }.map { key, value in
            (Int32(bitPattern: UInt32(key >> 32)), Int32(bitPattern: UInt32(truncatingIfNeeded: key)), value)
        }
    }
}

/// A growable open-addressing hash table from `UInt64` keys to values.
///
/// Each slot holds its key beside its value (`nil` while the slot is free), so that a lookup
/// touches one cache line, not one in each of three arrays (three misses an event on the
/// ingest's writing thread).
struct PackedTable<Value> {
    private struct Slot {
        var key: UInt64
        var value: Value?
        var used: Bool { value != nil }
    }

    private var slots = [Slot](repeating: Slot(key: 0, value: nil), count: 256)
    private(set) var count = 0

    @inline(__always)
    private static func slot(_ key: UInt64, mask: Int) -> Int {
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 32) & mask
    }

    @inline(__always)
    mutating func update(_ key: UInt64, default initial: @autoclosure () -> Value, _ body: (inout Value) -> Void) {
        let found: Bool = slots.withUnsafeMutableBufferPointer { slots in
            let mask = slots.count - 1
            var i = Self.slot(key, mask: mask)
            while slots[i].used {
                if slots[i].key == key {
                    body(&slots[i].value!)
                    return true
                }
                i = (i + 1) & mask
            }
            var v = initial()
            body(&v)
            slots[i] = Slot(key: key, value: v)
            return false
        }
        if found { return }
        count += 1
        if count * 2 > slots.count { grow() }
    }

    private mutating func grow() {
        let old = entries()
        slots = [Slot](repeating: Slot(key: 0, value: nil), count: slots.count * 2)
        let mask = slots.count - 1
        for (k, v) in old {
            var i = Self.slot(k, mask: mask)
            while slots[i].used { i = (i + 1) & mask }
            slots[i] = Slot(key: k, value: v)
        }
    }

    func entries() -> [(UInt64, Value)] {
        var out: [(UInt64, Value)] = []
        out.reserveCapacity(count)
        for slot in slots where slot.used { out.append((slot.key, slot.value!)) }
        return out
    }
}
