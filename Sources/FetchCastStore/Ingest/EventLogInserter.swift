import FetchCastCore
import FetchCastTrace

/// Inserts a file's events into `event_log`, many rows per statement.
///
/// One `INSERT … VALUES (…), (…), …` of ``rowsPerStatement`` rows runs SQLite's per-statement
/// work (open the table, find its last rowid, halt, reset) once for that many rows instead of
/// once per row. What is stored is what one insert per row stores: the same rows, in file
/// order, with consecutive ids (the ingest is the store's only writer while it runs); a column a
/// row has no value for is NULL either way. Rows wait here until a statement is full or
/// ``flush()`` (the ingest flushes after each batch the parser hands over), which inserts the
/// rest one by one.
struct EventLogInserter {
    /// Rows per multi-row statement (64 × 14 parameters, far below SQLite's limit).
    static let rowsPerStatement = 64
    /// file_id, line, time_us, utc_offset_s, device_id, app_id, kind, result, bytes, duration_ms,
    /// network, power, battery, low_power.
    static let columns: Int32 = 14

    private let connection: Connection
    private let many: Statement
    private let one: Statement
    private var waiting: [(event: EncodedEvent, device: Int64?, app: Int64)] = []
    /// Whether each of `many`'s rows has condition values bound (a `state` row's), to be set to
    /// NULL again when another kind of row takes its place.
    private var conditionsBound = Array(repeating: false, count: rowsPerStatement)
    /// The ids of the first and the last row inserted, once one was.
    private(set) var firstID: Int64?
    private(set) var lastID: Int64?

    /// Prepares the statements for the events of file `fileID`.
    init(connection: Connection, fileID: Int64) throws(StoreError) {
        self.connection = connection
        let insert = "INSERT INTO event_log(file_id, line, time_us, utc_offset_s, device_id, app_id, kind, result, bytes, duration_ms, network, power, battery, low_power) VALUES "
        let row = "(" + Array(repeating: "?", count: Int(Self.columns)).joined(separator: ",") + ")"
        many = try connection.prepare(insert + Array(repeating: row, count: Self.rowsPerStatement).joined(separator: ","))
        one = try connection.prepare(insert + row)
        // Unbound parameters are NULL; the file's id is the same in every row.
        for slot in 0..<Self.rowsPerStatement { many.bindInt(Int32(slot) * Self.columns + 1, fileID) }
        one.bindInt(1, fileID)
        waiting.reserveCapacity(Self.rowsPerStatement)
    }

    /// Adds one event; it is in the table once a statement is full or after ``flush()``.
    @inline(__always)
    mutating func add(_ e: EncodedEvent, device: Int64?, app: Int64) throws(StoreError) {
        waiting.append((e, device, app))
        if waiting.count == Self.rowsPerStatement {
            for slot in 0..<Self.rowsPerStatement {
                let w = waiting[slot]
                conditionsBound[slot] = Self.bind(w.event, device: w.device, app: w.app, to: many,
                                                  at: Int32(slot) * Self.columns, clearingConditions: conditionsBound[slot])
            }
            try many.run()
            inserted(Self.rowsPerStatement)
            waiting.removeAll(keepingCapacity: true)
        }
    }

    /// Inserts the rows still waiting (fewer than ``rowsPerStatement``), one statement each.
    mutating func flush() throws(StoreError) {
        for w in waiting {
            _ = Self.bind(w.event, device: w.device, app: w.app, to: one, at: 0, clearingConditions: true)
            try one.run()
            inserted(1)
        }
        waiting.removeAll(keepingCapacity: true)
    }

    private mutating func inserted(_ rows: Int) {
        let last = connection.lastInsertRowID
        if firstID == nil { firstID = last - Int64(rows - 1) }
        lastID = last
    }

    /// Binds an event's columns (parameters 2–14 after `base`; 1 is the file, bound once): a
    /// `state` row's conditions, any other row's result, bytes and duration, the rest NULL.
    /// - Returns: Whether condition values were bound.
    @inline(__always)
    private static func bind(_ e: EncodedEvent, device: Int64?, app: Int64, to s: Statement, at base: Int32,
                             clearingConditions: Bool) -> Bool {
        s.bindInt(base + 2, e.line)
        s.bindInt(base + 3, e.timeMicros)
        s.bindInt(base + 4, Int64(e.utcOffsetSeconds))
        s.bindInt(base + 5, device)
        s.bindInt(base + 6, app)
        s.bindInt(base + 7, Int64(e.kind.rawValue))
        if e.kind == .state {
            let c = e.conditions
            s.bindInt(base + 8, nil)
            s.bindInt(base + 9, nil)
            s.bindInt(base + 10, nil)
            s.bindInt(base + 11, c.network.map { Int64($0.rawValue) })
            s.bindInt(base + 12, c.power.map { Int64($0.rawValue) })
            s.bindInt(base + 13, c.battery.map { Int64($0) })
            s.bindInt(base + 14, c.lowPower.map { $0 ? 1 : 0 })
            return true
        }
        s.bindInt(base + 8, e.result.map { Int64($0.rawValue) })
        s.bindInt(base + 9, e.bytes)
        s.bindInt(base + 10, e.durationMs)
        if clearingConditions {
            for column in Int32(11)...14 { s.bindInt(base + column, nil) }
        }
        return false
    }
}
