import FetchCastCore
import FetchCastStore
import FetchCastTrace
import PostgresNIO

/// The event scans of `export events` and `evaluate` (``EventLogScanner``): one query each in a
/// `REPEATABLE READ` snapshot, ordered by `(time_us, file_id, line)`, its rows streamed as they
/// are consumed (PostgresNIO asks the server for more only as the rows before are handed out),
/// so memory does not grow with the number of events. Every value is bound.
extension PostgresEventLog: EventLogScanner {
    /// Events per batch of ``scanTimeOrdered(symbols:devices:files:batches:)``, as on SQLite.
    static let batchSize = 8192

    package func hasStateRows() async throws -> Bool {
        do {
            return try await scalar(
                "SELECT count(*) FROM (SELECT 1 FROM file_counts WHERE kind = \(Int64(EventKind.state.rawValue)) LIMIT 1) s",
                on: try await usableConnection()) > 0
        } catch {
            throw mapped(error)
        }
    }

    package func scanEventRows(_ filter: EventFilter, _ body: (EventRow) throws -> Void) async throws {
        var conditions: [String] = []
        var binds = PostgresBindings()
        func bind(_ condition: String, _ value: some PostgresThrowingDynamicTypeEncodable) throws {
            try binds.append(value)
            conditions.append(condition + "$\(conditions.count + 1)")
        }
        if let device = filter.device { try bind("device = ", device) }
        if let app = filter.app { try bind("app = ", app) }
        if let from = filter.fromMicros { try bind("time_us >= ", from) }
        if let to = filter.toMicros { try bind("time_us < ", to) }
        let whereClause = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        // Fixed text only: the conditions are the four above, their values bound as $1…$4.
        let query = PostgresQuery(
            unsafeSQL: """
                SELECT time_utc, utc_offset_s::bigint, device, app, event, result, bytes, duration_ms, time_us, file_id,
                       line, network, power, battery::bigint, low_power
                FROM events\(whereClause) ORDER BY time_us, file_id, line
                """,
            binds: binds)
        try await readSnapshot { c in
            for try await row in try await self.statement(query, on: c) {
                let (timeUTC, offset, device, app, event, result, bytes, durationMs, timeMicros, fileID, line, network, power, battery, lowPower) =
                    try row.decode(
                        (Int64, Int64, String, String, String, String?, Int64?, Int64?, Int64, Int64, Int64, String?, String?, Int64?, String?).self)
                try body(EventRow(
                    timeUTC: timeUTC, utcOffsetSeconds: offset, device: device, app: app, event: event, result: result,
                    bytes: bytes, durationMs: durationMs, timeMicros: timeMicros, fileID: fileID, line: line, network: network,
                    power: power, battery: battery, lowPower: lowPower))
            }
        }
    }

    package func scanTimeOrdered(
        symbols: SymbolTable, devices: DeviceIDs?, files: ([TimeOrderedScan.File]) throws -> Void,
        batches: (_ events: [EncodedEvent], _ file: String) throws -> Void
    ) async throws {
        try await readSnapshot { c in
            var deviceSymbol: [Int64: Int32] = [:]
            var appSymbol: [Int64: Int32] = [:]
            var fileName: [Int64: String] = [:]
            var fileList: [TimeOrderedScan.File] = []
            var kept: [Int64] = []
            for try await (id, name) in try await self.statement("SELECT device_id, name FROM devices ORDER BY device_id", on: c)
                .decode((Int64, String).self) {
                deviceSymbol[id] = symbols.intern(name)
                if devices?.contains(name) ?? true { kept.append(id) }
            }
            for try await (id, name) in try await self.statement("SELECT app_id, name FROM apps ORDER BY app_id", on: c)
                .decode((Int64, String).self) {
                appSymbol[id] = symbols.intern(name)
            }
            for try await (id, name, sha256, rows) in try await self.statement(
                "SELECT file_id, name, sha256, rows FROM files ORDER BY file_id", on: c).decode((Int64, String, String, Int64).self) {
                fileName[id] = name
                fileList.append(TimeOrderedScan.File(name: name, sha256: sha256, rows: rows))
            }
            try files(fileList)
            let columns = """
                SELECT time_us, utc_offset_s::bigint, device_id, app_id, kind::bigint, result::bigint, line, file_id,
                       network::bigint, power::bigint, battery::bigint, low_power::bigint
                FROM event_log
                """
            // The devices kept are matched by name above, byte for byte; their ids are bound as
            // one array (device 0 is a publish to every device, always kept).
            let query: PostgresQuery = devices == nil
                ? "\(unescaped: columns) ORDER BY time_us, file_id, line"
                : "\(unescaped: columns) WHERE device_id = 0 OR device_id = ANY(\(kept)) ORDER BY time_us, file_id, line"
            var batch: [EncodedEvent] = []
            batch.reserveCapacity(Self.batchSize)
            var fileOfBatch: Int64 = -1
            func flush() throws {
                guard !batch.isEmpty else { return }
                try batches(batch, fileName[fileOfBatch] ?? "store")
                batch.removeAll(keepingCapacity: true)
            }
            for try await row in try await self.statement(query, on: c) {
                let (timeMicros, offset, deviceID, appID, kindValue, resultValue, line, file, network, power, battery, lowPower) =
                    try row.decode((Int64, Int64, Int64, Int64, Int64, Int64?, Int64, Int64, Int64?, Int64?, Int64?, Int64?).self)
                if file != fileOfBatch || batch.count == Self.batchSize {
                    try flush()
                    fileOfBatch = file
                }
                let at = "file \(file), line \(line)"
                let device: Int32
                if deviceID == 0 {
                    device = EncodedEvent.everyDevice
                } else if let d = deviceSymbol[deviceID] {
                    device = d
                } else {
                    throw self.unknown("device_id", deviceID, at: at)
                }
                guard let app = appSymbol[appID] else { throw self.unknown("app_id", appID, at: at) }
                let (kind, result, conditions) = try self.decoded(
                    kind: kindValue, result: resultValue, network: network, power: power, battery: battery, lowPower: lowPower, at: at)
                batch.append(EncodedEvent(
                    timeMicros: timeMicros, utcOffsetSeconds: Int32(truncatingIfNeeded: offset), device: device, app: app,
                    kind: kind, result: result, line: line, conditions: conditions))
            }
            try flush()
        }
    }

    /// The kind, result and conditions of a stored event from their columns.
    /// - Throws: ``StoreError`` naming `at` and the column when a value is unknown to this build,
    ///   or a battery level is outside 0–100 (ingest stores no other).
    func decoded(
        kind kindValue: Int64, result resultValue: Int64?, network: Int64?, power: Int64?, battery: Int64?, lowPower: Int64?, at: String
    ) throws -> (EventKind, FetchResult?, ConditionChange) {
        guard let kind = UInt8(exactly: kindValue).flatMap(EventKind.init(rawValue:)) else {
            throw unknown("kind", kindValue, at: at)
        }
        var result: FetchResult?
        if let resultValue {
            guard let r = UInt8(exactly: resultValue).flatMap(FetchResult.init(rawValue:)) else {
                throw unknown("result", resultValue, at: at)
            }
            result = r
        }
        func decoded<T>(_ value: Int64?, _ column: String, _ decode: (Int64) -> T?) throws -> T? {
            guard let value else { return nil }
            guard let decoded = decode(value) else { throw unknown(column, value, at: at) }
            return decoded
        }
        let conditions = ConditionChange(
            network: try decoded(network, "network") { UInt8(exactly: $0).flatMap(NetworkCondition.init(rawValue:)) },
            power: try decoded(power, "power") { UInt8(exactly: $0).flatMap(PowerCondition.init(rawValue:)) },
            battery: try decoded(battery, "battery") { (0...100).contains($0) ? UInt8($0) : nil },
            lowPower: try decoded(lowPower, "low_power") { $0 == 0 || $0 == 1 ? $0 == 1 : nil })
        return (kind, result, conditions)
    }

    /// A stored value this build does not know (or a name row that is missing), named with its
    /// event's file and line.
    func unknown(_ column: String, _ value: Int64, at: String) -> StoreError {
        StoreError(path: location, message: "event_log (\(at)) has \(column) \(value), which this fetchcast does not know (a newer fetchcast wrote it, or the database is damaged; upgrade fetchcast or re-ingest into a new database)")
    }
}
