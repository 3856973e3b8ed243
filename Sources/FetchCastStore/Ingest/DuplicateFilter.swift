import FetchCastCore
import FetchCastTrace

/// Finds the rows of a file whose events the store already held before the file, so that an
/// ingest adds only the others (``IngestOptions/keepsDuplicates`` turns it off).
///
/// The rule: a row is already stored when an `event_log` row that was there before this file
/// has the same device (or, for a publish to every device, none), instant (`time_us`, to the
/// microsecond), app, kind, result, bytes, duration, and, for a `state` row, the same network,
/// power, battery and Low Power Mode. Neither the file nor the line counts, nor the UTC offset
/// the time was written with: `…T10:00:00+01:00` and `…T09:00:00Z` are one instant, so a trace
/// re-exported in UTC adds nothing, and the stored event keeps the offset it was first written
/// with. Each
/// stored event stands for at most one row of a later file: a row repeated in the file is
/// skipped as often as the store already holds it and added the other times, so a file read
/// again adds nothing, and rows repeated inside one file are all kept, as before. Rows of the
/// file being ingested never count as stored.
///
/// Per batch and device the store holds events of, one indexed query (the history index,
/// (device, time)) reads the stored events between the batch's first and last instant of that
/// device; when that range holds many more events than the batch (an unsorted file), the
/// batch's instants are looked up one by one instead. A store without events is never read:
/// ``init(connection:lastIDBefore:)`` returns `nil`, and a first ingest costs what it did.
struct DuplicateFilter {
    private let connection: Connection
    /// Events with an id up to this one were in the store before the file.
    private let lastIDBefore: Int64
    /// Store ids of the file's device and app symbols looked up so far; -1 for a name the
    /// store did not hold (none of its rows can be stored).
    private var devices: [Int32: Int64] = [:]
    private var apps: [Int32: Int64] = [:]
    /// Stored events already matched by a row of this file (each matches one row).
    private var matched: Set<Int64> = []
    /// Rows skipped so far.
    private(set) var skipped: Int64 = 0

    /// A filter for a file ingested into a store whose events end at `lastIDBefore`; `nil` for
    /// a store without events (nothing can be a duplicate).
    init?(connection: Connection, lastIDBefore: Int64) {
        guard lastIDBefore > 0 else { return nil }
        self.connection = connection
        self.lastIDBefore = lastIDBefore
    }

    /// The events of `batch` that the store did not hold, in their order (`batch` itself when
    /// it holds none); adds the others to ``skipped``.
    /// - Parameters:
    ///   - batch: Parsed events; their symbols index `names`.
    ///   - names: The names of the file's symbols so far.
    /// - Complexity: O(batch + stored events read), one query per device of the batch known to
    ///   the store (or per instant, for a device whose stored range is much larger than its rows).
    mutating func newEvents(_ batch: [EncodedEvent], names: [String]) throws(StoreError) -> [EncodedEvent] {
        // Rows of each device the store knows, with the device's first and last instant.
        var groups: [Int32: (device: Int64?, first: Int64, last: Int64, rows: [Int])] = [:]
        for (i, e) in batch.enumerated() {
            guard let device = try storeID(ofDevice: e.device, names: names) else { continue }
            if groups[e.device] == nil {
                groups[e.device] = (device, e.timeMicros, e.timeMicros, [i])
            } else {
                groups[e.device]!.first = min(groups[e.device]!.first, e.timeMicros)
                groups[e.device]!.last = max(groups[e.device]!.last, e.timeMicros)
                groups[e.device]!.rows.append(i)
            }
        }
        var duplicate: [Bool]?
        for symbol in groups.keys.sorted() {
            let group = groups[symbol]!
            let stored = try storedEvents(device: group.device, from: group.first, to: group.last,
                                          instants: group.rows.lazy.map { batch[$0].timeMicros }, expected: group.rows.count)
            if stored.isEmpty { continue }
            var remaining = stored
            for i in group.rows {
                let e = batch[i]
                guard let app = try storeID(ofApp: e.app, names: names),
                      let id = remaining[Key(e, app: app)]?.popLast() else { continue }
                matched.insert(id)
                if duplicate == nil { duplicate = Array(repeating: false, count: batch.count) }
                duplicate![i] = true
                skipped += 1
            }
        }
        guard let duplicate else { return batch }
        var kept: [EncodedEvent] = []
        kept.reserveCapacity(batch.count)
        for (i, e) in batch.enumerated() where !duplicate[i] { kept.append(e) }
        return kept
    }

    /// What makes two events the same: every column of `event_log` but the id, file, line and
    /// UTC offset.
    private struct Key: Hashable {
        var time: Int64, app: Int64, kind: Int64
        var columns: StoredColumns

        /// The columns `Ingestor` writes for `e`.
        init(_ e: EncodedEvent, app: Int64) {
            (time, self.app, kind) = (e.timeMicros, app, Int64(e.kind.rawValue))
            columns = StoredColumns(e)
        }

        /// The columns of a row of ``DuplicateFilter/columns`` (after its id).
        init(_ s: Statement) {
            (time, app, kind) = (s.int(1), s.int(3), s.int(4))
            columns = StoredColumns(
                result: s.optionalInt(5), bytes: s.optionalInt(6), duration: s.optionalInt(7), network: s.optionalInt(8),
                power: s.optionalInt(9), battery: s.optionalInt(10), lowPower: s.optionalInt(11))
        }
    }

    private static let columns = "id, time_us, utc_offset_s, app_id, kind, result, bytes, duration_ms, network, power, battery, low_power"

    /// The stored events of `device` (before the file, not yet matched) between two instants,
    /// by their key; when the range holds far more events than the batch's `expected` rows, those
    /// at the batch's `instants` only.
    private func storedEvents(
        device: Int64?, from first: Int64, to last: Int64, instants: some Sequence<Int64>, expected: Int
    ) throws(StoreError) -> [Key: [Int64]] {
        var out: [Key: [Int64]] = [:]
        let range = try connection.cached(
            "SELECT \(Self.columns) FROM event_log WHERE device_id IS ?1 AND time_us BETWEEN ?2 AND ?3 AND id <= ?4 ORDER BY time_us DESC, id DESC")
        defer { range.reset() }
        try range.bind([device.map { .integer($0) } ?? .null, .integer(first), .integer(last), .integer(lastIDBefore)])
        let limit = 4 * expected + 4096
        var read = 0
        while try range.step() {
            read += 1
            if read > limit { break }
            let id = range.int(0)
            if !matched.contains(id) { out[Key(range), default: []].append(id) }
        }
        guard read > limit else { return out }
        // An unsorted file: the batch's rows are scattered over much of the device's history.
        range.reset()
        out = [:]
        let point = try connection.cached(
            "SELECT \(Self.columns) FROM event_log WHERE device_id IS ?1 AND time_us = ?2 AND id <= ?3 ORDER BY id DESC")
        defer { point.reset() }
        var seen: Set<Int64> = []
        for instant in instants where seen.insert(instant).inserted {
            try point.bind([device.map { .integer($0) } ?? .null, .integer(instant), .integer(lastIDBefore)])
            while try point.step() {
                let id = point.int(0)
                if !matched.contains(id) { out[Key(point), default: []].append(id) }
            }
            point.reset()
        }
        return out
    }

    /// The store id of a device symbol: `.some(nil)` for every device (a publish), `nil` when
    /// the store held no such device. Reads only (an insert would move `last_insert_rowid`,
    /// which the ingest reads).
    private mutating func storeID(ofDevice symbol: Int32, names: [String]) throws(StoreError) -> Int64?? {
        if symbol == EncodedEvent.everyDevice { return .some(nil) }
        if let known = devices[symbol] { return known < 0 ? nil : .some(known) }
        let id = try lookUp(table: "devices", name: names[Int(symbol)]) ?? -1
        devices[symbol] = id
        return id < 0 ? nil : .some(id)
    }

    /// The store id of an app symbol, `nil` when the store held no such app.
    private mutating func storeID(ofApp symbol: Int32, names: [String]) throws(StoreError) -> Int64? {
        if let known = apps[symbol] { return known < 0 ? nil : known }
        let id = try lookUp(table: "apps", name: names[Int(symbol)]) ?? -1
        apps[symbol] = id
        return id < 0 ? nil : id
    }

    private func lookUp(table: String, name: String) throws(StoreError) -> Int64? {
        let s = try connection.cached("SELECT id FROM \(table) WHERE name = ?")
        defer { s.reset() }
        try s.bind([.text(name)])
        return try s.step() ? s.int(0) : nil
    }
}
