import FetchCastCore
import FetchCastTrace

/// The whole event log in time order, read in one snapshot: what a replay from the store reads,
/// as an ``EventProducer`` (the replay reads it through an ``EventSource``, on the source's
/// thread).
///
/// Opening it (``Store/timeOrderedScan(symbols:devices:)``) begins a read transaction and
/// interns every device name, then every app name, into the caller's ``SymbolTable``;
/// ``files`` lists the ingested files in ingest order. ``next(into:maxCount:onInvalid:)`` then hands out
/// the events as ``EncodedEvent`` batches in `(time, insertion)` order, each batch from one
/// file, the shape a trace file's batches have. ``finish()`` ends the transaction.
///
/// - Complexity: O(events) time, one `ORDER BY time_us, id` query; memory O(devices + apps +
///   files) plus one batch.
package final class TimeOrderedScan {
    /// An ingested file: its name, content hash and row count, as `fetchcast files` lists it.
    package struct File: Sendable, Hashable {
        package var name: String
        package var sha256: String
        package var rows: Int64

        /// Creates a file record (an engine reading its `files` table).
        package init(name: String, sha256: String, rows: Int64) {
            self.name = name
            self.sha256 = sha256
            self.rows = rows
        }
    }

    /// Every ingested file, in ingest order.
    package let files: [File]
    private let store: Store
    private let query: Statement
    private let deviceSymbol: [Int64: Int32]
    private let appSymbol: [Int64: Int32]
    private let fileName: [Int64: String]
    /// The file of the batch being filled.
    private var fileOfBatch: Int64 = -1
    /// The name of the file of the last batch handed out.
    package private(set) var batchFile: String?
    /// The query is on a row that the previous batch had no room for.
    private var pendingRow = false
    private var exhausted = false
    private var closed = false

    fileprivate init(store: Store, symbols: SymbolTable, devices: DeviceIDs?) throws(StoreError) {
        let c = store.connection
        try c.execute("BEGIN")
        do throws(StoreError) {
            var deviceSymbol: [Int64: Int32] = [:]
            var appSymbol: [Int64: Int32] = [:]
            var fileName: [Int64: String] = [:]
            var files: [File] = []
            var kept: [Int64] = []
            let d = try c.prepare("SELECT id, name FROM devices")
            while try d.step() {
                let name = d.text(1)
                deviceSymbol[d.int(0)] = symbols.intern(name)
                if devices?.contains(name) ?? true { kept.append(d.int(0)) }
            }
            let a = try c.prepare("SELECT id, name FROM apps")
            while try a.step() { appSymbol[a.int(0)] = symbols.intern(a.text(1)) }
            let f = try c.prepare("SELECT id, name, sha256, rows FROM files ORDER BY id")
            while try f.step() {
                fileName[f.int(0)] = f.text(1)
                files.append(File(name: f.text(1), sha256: f.text(2), rows: f.int(3)))
            }
            let columns = "SELECT time_us, utc_offset_s, device_id, app_id, kind, result, line, file_id, id, network, power, battery, low_power FROM event_log"
            if devices != nil {
                // The devices kept are matched by name here, byte for byte (``DeviceIDs``, as a
                // trace file's rows are), and their ids bound as one JSON array: one parameter
                // however many devices (no SQLite variable limit), integers only (no quoting).
                query = try c.prepare(columns + " WHERE device_id IS NULL OR device_id IN (SELECT value FROM json_each(?)) ORDER BY time_us, id")
                try query.bind([.text(Self.jsonArray(kept))])
            } else {
                query = try c.prepare(columns + " ORDER BY time_us, id")
            }
            self.store = store
            self.deviceSymbol = deviceSymbol
            self.appSymbol = appSymbol
            self.fileName = fileName
            self.files = files
        } catch {
            try? c.execute("COMMIT")
            throw error
        }
    }

    deinit { close() }

    /// `[1,2,3]`: ids as a JSON array, for `json_each`.
    static func jsonArray(_ ids: [Int64]) -> String { "[" + ids.map(String.init).joined(separator: ",") + "]" }

    /// Replaces `batch` with the next events: at most `maxCount`, all from one file.
    /// - Parameters:
    ///   - batch: Emptied, then filled.
    ///   - maxCount: Events per batch at most.
    /// - Returns: The name of the file the batch's events came from (`"store"` when the file
    ///   row is missing), or `nil` once every event was handed out (`batch` is then empty).
    /// - Throws: ``StoreError`` when SQLite fails, or a row names a device or app that is not
    ///   in the store or a kind or result this build does not know. The events before that row
    ///   were handed out in earlier batches.
    func fill(_ batch: inout [EncodedEvent], maxCount: Int) throws(StoreError) -> String? {
        batch.removeAll(keepingCapacity: true)
        if exhausted { return nil }
        let q = query
        while true {
            if !pendingRow {
                guard try q.step() else {
                    exhausted = true
                    return batch.isEmpty ? nil : name(ofFile: fileOfBatch)
                }
                pendingRow = true
            }
            let file = q.int(7)
            if (file != fileOfBatch && !batch.isEmpty) || batch.count == maxCount {
                return name(ofFile: fileOfBatch)
            }
            fileOfBatch = file
            pendingRow = false
            let row = q.int(8)
            let device: Int32
            if q.isNull(2) {
                device = EncodedEvent.everyDevice
            } else if let d = deviceSymbol[q.int(2)] {
                device = d
            } else {
                throw .unknownValue(path: store.path, table: "event_log", row: row, column: "device_id", value: q.int(2))
            }
            guard let app = appSymbol[q.int(3)] else {
                throw .unknownValue(path: store.path, table: "event_log", row: row, column: "app_id", value: q.int(3))
            }
            let kind = try store.kind(q.int(4), row: row)
            let result = q.isNull(5) ? nil : try store.result(q.int(5), row: row)
            batch.append(EncodedEvent(
                timeMicros: q.int(0), utcOffsetSeconds: Int32(q.int(1)),
                device: device, app: app, kind: kind, result: result, line: q.int(6),
                conditions: try store.conditions(q, from: 9, row: row)))
        }
    }

    /// Ends the read transaction; the scan hands out nothing more. Calling it again does nothing.
    func close() {
        if closed { return }
        closed = true
        exhausted = true
        try? store.connection.execute("COMMIT")
    }

    private func name(ofFile id: Int64) -> String { fileName[id] ?? "store" }
}

extension TimeOrderedScan: EventProducer {
    package var symbolTable: SymbolTable? { nil }  // every name was interned when it opened

    package func next(into batch: inout [EncodedEvent], maxCount: Int, onInvalid: ((TraceError, String) -> Void)?) throws(StoreError) -> Bool {
        batchFile = try fill(&batch, maxCount: maxCount)
        return batchFile != nil
    }

    package var bytesRead: Int64 { 0 }

    /// Ends the read transaction.
    package func finish() { close() }
}

extension Store {
    /// Opens a read snapshot of every event in time order (see ``TimeOrderedScan``), interning
    /// device and app names into `symbols`; read it through an ``EventSource``.
    /// - Parameters:
    ///   - symbols: The symbol table the events' device and app symbols refer to.
    ///   - devices: Only these devices' events, and the publishes to every device (every
    ///     device's when `nil`). Every device's name is interned either way.
    /// - Returns: The scan; an ``EventSource`` over it ends the snapshot when it ends.
    /// - Throws: ``StoreError`` when the snapshot cannot be begun or read.
    package func timeOrderedScan(symbols: SymbolTable, devices: DeviceIDs? = nil) throws(StoreError) -> TimeOrderedScan {
        try TimeOrderedScan(store: self, symbols: symbols, devices: devices)
    }
}
