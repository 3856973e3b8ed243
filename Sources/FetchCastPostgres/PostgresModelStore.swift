import FetchCastCore
import FetchCastStore
import Logging
import NIOCore
import PostgresNIO

/// The model layer's store (``ModelStore``) in a PostgreSQL database: what `model`, `predict`
/// and `export model|cousage|predictions` read and write there.
///
/// Asynchronous: a query suspends its task until the server answers, blocking no thread. One
/// task uses a store at a time (it keeps its transaction's state). Every value is bound; the
/// SQL text is fixed.
///
/// - Devices and apps are numbered by their `seq` (schema 2): dense, in the order their first
///   event was ingested, as SQLite's rowids are. Every value returned and accepted as a device
///   or app id is a `seq`, never the 63-bit `device_id` of ``NameID``.
/// - An event's number is its file's `first_event` (the events of the files before it) plus its
///   place in its file; only whole-file numbers (each file's end) are ever watermarks, so "after
///   `n`" is "in a file whose `first_event` is at least `n`" and no event's own number is stored.
/// - A read transaction is `REPEATABLE READ READ ONLY`. A write transaction first takes the
///   session-level advisory lock ``PostgresSchema/modelLock`` and only then begins (`REPEATABLE
///   READ`), so its snapshot is taken after the writer before it committed; a process that dies
///   holding the lock releases it with its session.
package final class PostgresModelStore: ModelStore {
    package let path: String
    package let log: PostgresEventLog
    var connection: PostgresConnection { log.connection }
    var logger: Logger { log.logger }
    /// Nesting depth of transactions: an inner one runs in the outer.
    var depth = 0
    /// What ``prefetchModelStates(keys:device:)`` read for the current read transaction (or
    /// ``withOneRead(keys:device:_:)`` for its body): the last event's number, the states of its
    /// keys (`nil`: no such row) and, for its device, the largest `first_event` of the files
    /// holding events of the device or of every device (`nil`: none). Dropped at its end.
    var prefetched: Prefetched?
    /// Inside ``withOneRead(keys:device:_:)``'s body: any query is refused
    /// (``NeedsTransaction``), and `refused` says one was.
    var oneRead: (active: Bool, refused: Bool) = (false, false)
    /// Whether the transaction in progress is a read transaction (nothing in it can change).
    private var readOnly = false
    /// Work that must stay on its session (the rest of a transaction, a session lock held):
    /// while above 0, a lost connection is not replaced (``query(_:)``).
    var pinned = 0
    /// The session's `statement_timeout` in milliseconds (0: none) as this store last set it,
    /// and the connection it set it on (a new connection starts without one).
    var statementTimeout: (milliseconds: Int64, on: PostgresConnection?) = (0, nil)

    /// Devices' `device_id`s by `seq`, shared with the process's other connections to the database.
    let deviceIDs: DeviceIDsBySeq

    /// Wraps an open event log (``PostgresEventLog/open(_:create:upgrade:)``, schema 4 for the
    /// model state), sharing `deviceIDs` with the process's other connections to its database.
    package convenience init(log: PostgresEventLog) {
        self.init(log: log, deviceIDs: DeviceIDsBySeq())
    }

    init(log: PostgresEventLog, deviceIDs: DeviceIDsBySeq) {
        self.log = log
        self.path = log.location
        self.deviceIDs = deviceIDs
    }

    /// Opens the database at `location` for the model layer, upgrading an older FetchCast schema
    /// (the model state needs schema 2).
    /// - Throws: ``StoreError`` as ``PostgresEventLog/open(_:create:upgrade:)`` does.
    package static func open(_ location: PostgresLocation) async throws -> PostgresModelStore {
        PostgresModelStore(log: try await PostgresEventLog.open(location, create: false, upgrade: true))
    }

    /// Closes the connection; the server ends its session (and releases its locks) before this
    /// returns.
    package func close() async {
        let connection = log.closing()
        guard !connection.isClosed else { return }
        try? await connection.close()
    }

    /// A store given up without ``close()`` (a service's pooled readers when the service ends)
    /// closes its connection without waiting for it.
    deinit {
        let connection = log.closing()
        if !connection.isClosed { let _: EventLoopFuture<Void> = connection.close() }
    }

    // MARK: Transactions

    package func readTransaction<T>(_ body: () async throws -> T) async throws -> T {
        try await transaction(begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", lock: false, body)
    }

    package func writeTransaction<T>(_ body: () async throws -> T) async throws -> T {
        try await transaction(begin: "BEGIN ISOLATION LEVEL REPEATABLE READ", lock: true, body)
    }

    private func transaction<T>(begin: PostgresQuery, lock: Bool, _ body: () async throws -> T) async throws -> T {
        if depth > 0 {
            depth += 1
            defer { depth -= 1 }
            return try await body()
        }
        // The first statement may open a connection in place of a lost one; the others stay on
        // its session (the lock, the transaction).
        try await run(lock ? "SELECT pg_advisory_lock(\(PostgresSchema.modelLock))" : begin)
        pinned += 1
        defer { pinned -= 1 }
        let result = await Result(awaiting: {
            if lock { try await run(begin) }
            return try await committed(readOnly: !lock, body)
        })
        if lock { _ = try? await run("SELECT pg_advisory_unlock(\(PostgresSchema.modelLock))") }
        return try result.get()
    }

    /// Runs `body` in the transaction just begun and ends it: committed when `body` returns,
    /// rolled back when it throws.
    private func committed<T>(readOnly: Bool, _ body: () async throws -> T) async throws -> T {
        depth = 1
        self.readOnly = readOnly
        defer {
            depth = 0
            prefetched = nil
        }
        let value: T
        do {
            value = try await body()
        } catch {
            _ = try? await run("ROLLBACK")
            throw error
        }
        guard !readOnly else {
            // A read transaction's COMMIT changes nothing and cannot lose anything: sent without
            // waiting for it (the connection runs it before the next query).
            let _: EventLoopFuture<PostgresQueryResult> = connection.query("COMMIT", logger: logger)
            return value
        }
        do {
            try await run("COMMIT")
        } catch {
            _ = try? await run("ROLLBACK")
            throw error
        }
        return value
    }

    // MARK: Events

    package func lastEventID() async throws -> Int64 {
        if let prefetched { return prefetched.last }
        return try await scalar("SELECT \(unescaped: Self.lastEvent)") ?? 0
    }

    /// The last event's number: the end of the last file (appends take turns and number their
    /// file after taking the turn, so files end in `file_id` order); an index probe, whatever
    /// the number of files.
    static let lastEvent = "COALESCE((SELECT first_event + rows FROM files ORDER BY file_id DESC LIMIT 1), 0)::bigint"

    /// Reads the states of `keys`, the last event's number and what `device`'s
    /// ``hasEvents(ofDevice:afterID:beforeMicros:)`` needs in one query, inside a read
    /// transaction (one snapshot, so the copy stays exact until it ends); outside one, nothing.
    package func prefetchModelStates(keys: [String], device: Int64?) async throws {
        guard depth > 0, readOnly else { return }
        prefetched = try await prefetch(keys: keys, device: device)
    }

    /// One statement's reads (``Prefetched``).
    private func prefetch(keys: [String], device: Int64?) async throws -> Prefetched {
        var states: [String: (watermark: Int64, state: ByteBuffer)?] = [:]
        for key in keys { states[key] = .some(nil) }
        var last: Int64 = 0
        var lastFile: Int64?
        let split = try await stateKeys(keys)
        var deviceID: Int64 = -1
        if let device, let id = try await self.deviceID(seq: device) { deviceID = id }
        // Every part an index probe: the files' primary key, file_counts' (device_id, file_id, …)
        // for the device and for every device (0), the two state tables' keys. One row at least
        // (no keys: the numbers alone).
        for row in try await query("""
            SELECT s.last, s.device_file, m.key, m.watermark, m.state
            FROM (SELECT \(unescaped: Self.lastEvent) AS last,
                         (SELECT f.first_event FROM files f WHERE f.file_id = GREATEST(
                             (SELECT max(c.file_id) FROM file_counts c WHERE c.device_id = 0),
                             (SELECT max(c.file_id) FROM file_counts c WHERE c.device_id = \(deviceID))))
                         AS device_file) s
            LEFT JOIN (
                SELECT key, watermark, state FROM model_state WHERE key = ANY(\(split.fleet)::text[])
                UNION ALL
                SELECT key, watermark, state FROM device_state
                WHERE device_id = ANY(\(split.devices)::bigint[]) AND key = ANY(\(split.deviceKeys)::text[])) m ON true
            """) {
            let (n, file, key, watermark, state) = try row.decode((Int64, Int64?, String?, Int64?, ByteBuffer?).self)
            last = n
            lastFile = file
            if let key, let watermark, let state { states[key] = (watermark, state) }
        }
        return Prefetched(last: last, states: states, device: device.map { ($0, lastFile) })
    }

    package func withOneRead<T>(keys: [String], device: Int64, _ body: () async throws -> T) async throws -> T? {
        guard depth == 0 else { return nil }
        prefetched = try await prefetch(keys: keys, device: device)
        return try await inOneRead(body)
    }

    /// Runs `body` on ``prefetched`` as one read: any query it asks for is refused, and
    /// then it answers `nil`.
    private func inOneRead<T>(_ body: () async throws -> T) async throws -> T? {
        depth = 1
        readOnly = true
        oneRead = (true, false)
        defer {
            depth = 0
            prefetched = nil
            oneRead = (false, false)
        }
        do {
            let value = try await body()
            return oneRead.refused ? nil : value
        } catch is NeedsTransaction {
            return nil
        } catch {
            if oneRead.refused { return nil }
            throw error
        }
    }

    package func withChanges<T>(afterID: Int64, keys: [String], _ body: (_ touched: [Int64: Int64]) async throws -> T) async throws -> T? {
        guard depth == 0 else { return nil }
        // The last event's number and the states, in one statement (an index probe each, and
        // little to plan: checks are many); most find the number unchanged and stop there.
        var states: [String: (watermark: Int64, state: ByteBuffer)?] = [:]
        for key in keys { states[key] = .some(nil) }
        var last: Int64 = 0
        let split = try await stateKeys(keys)
        // The check asks for fleet keys only (the fold's watermark, the epoch): then
        // `model_state` alone, as before `device_state` existed.
        let rows = split.deviceKeys.isEmpty
            ? try await query("""
                SELECT s.last, m.key, m.watermark, m.state
                FROM (SELECT \(unescaped: Self.lastEvent) AS last) s LEFT JOIN model_state m ON m.key = ANY(\(split.fleet)::text[])
                """)
            : try await query("""
                SELECT s.last, m.key, m.watermark, m.state
                FROM (SELECT \(unescaped: Self.lastEvent) AS last) s LEFT JOIN (
                    SELECT key, watermark, state FROM model_state WHERE key = ANY(\(split.fleet)::text[])
                    UNION ALL
                    SELECT key, watermark, state FROM device_state
                    WHERE device_id = ANY(\(split.devices)::bigint[]) AND key = ANY(\(split.deviceKeys)::text[])) m ON true
                """)
        for row in rows {
            let (n, key, watermark, state) = try row.decode((Int64, String?, Int64?, ByteBuffer?).self)
            last = n
            if let key, let watermark, let state { states[key] = (watermark, state) }
        }
        var touched: [Int64: Int64] = [:]
        if last > afterID {
            // The devices of the files from `afterID` up to that number only (a later statement
            // may see later files: those are the next check's), through the files' first_event
            // index and file_counts' file index; only those files' devices are looked up.
            for row in try await query("""
                SELECT COALESCE(d.seq, 0), max(f.first_event)
                FROM files f JOIN file_counts c ON c.file_id = f.file_id
                LEFT JOIN devices d ON d.device_id = c.device_id AND c.device_id <> 0
                WHERE f.first_event >= \(afterID) AND f.first_event < \(last) AND f.rows > 0
                GROUP BY 1
                """) {
                let (device, first) = try row.decode((Int64, Int64).self)
                touched[device] = first
            }
        }
        prefetched = Prefetched(last: last, states: states, device: nil)
        return try await inOneRead { try await body(touched) }
    }

    /// A session advisory lock (``PostgresSchema/warmUpLock``), tried every 200 ms while another
    /// session holds it; released when `body` ends, or with the connection of a process that dies.
    package func withWarmUpTurn<T>(shouldStop: () -> Bool, _ body: () async throws -> T) async throws -> T? {
        while try await scalar("SELECT pg_try_advisory_lock(\(PostgresSchema.warmUpLock))::int") != 1 {
            if shouldStop() { return nil }
            try await Task.sleep(for: .milliseconds(200))
        }
        pinned += 1
        defer { pinned -= 1 }
        let result = await Result(awaiting: body)
        _ = try? await run("SELECT pg_advisory_unlock(\(PostgresSchema.warmUpLock))")
        return try result.get()
    }

    /// What one statement read (``prefetchModelStates(keys:device:)``).
    struct Prefetched {
        var last: Int64
        var states: [String: (watermark: Int64, state: ByteBuffer)?]
        /// The device asked about and the largest `first_event` of the files holding its events
        /// or events of every device.
        var device: (id: Int64, lastFile: Int64?)?
    }

    /// A query asked for inside ``withOneRead(keys:device:_:)``'s body.
    struct NeedsTransaction: Error {}

    package func deviceNames(afterID: Int64) async throws -> [Int64: String] {
        try await names("SELECT seq, name FROM devices WHERE seq > \(afterID)")
    }

    package func appNames(afterID: Int64) async throws -> [Int64: String] {
        try await names("SELECT seq, name FROM apps WHERE seq > \(afterID)")
    }

    package func hasEvents(ofDevice device: Int64, afterID: Int64, beforeMicros: Int64) async throws -> Bool {
        // Files are numbered in the order of their events: the device has events after `afterID`
        // (a file's end) exactly when a file of its events starts at or after it.
        if let known = prefetched?.device, known.id == device, beforeMicros == .max { return known.lastFile.map { $0 >= afterID } ?? false }
        guard let file = try await firstFile(after: afterID) else { return false }
        // By the device's id (``deviceID(seq:)``), so that Citus sends it to the device's shard
        // (and every device's, 0) only.
        let id = try await deviceID(seq: device) ?? -1
        return try await scalar("""
            SELECT count(*) FROM (
                SELECT 1 FROM event_log
                WHERE device_id IN (0, \(id)) AND file_id >= \(file) AND time_us < \(beforeMicros)
                LIMIT 1) found
            """) ?? 0 > 0
    }

    package func devicesWithEvents(afterID: Int64) async throws -> (devices: [Int64], everyDevice: Bool) {
        guard let file = try await firstFile(after: afterID) else { return ([], false) }
        // From the per-file aggregates, which count every event of every file.
        let rows = try await query("""
            SELECT DISTINCT COALESCE(d.seq, 0) FROM file_counts c LEFT JOIN devices d ON d.device_id = c.device_id AND c.device_id <> 0
            WHERE c.file_id >= \(file)
            """)
        var devices: [Int64] = []
        var everyDevice = false
        for row in rows {
            let seq = try row.decode(Int64.self)
            if seq == 0 { everyDevice = true } else { devices.append(seq) }
        }
        return (devices.sorted(), everyDevice)
    }

    package func deviceHistory(
        ofDevice device: Int64, fromMicros: Int64, beforeMicros: Int64, _ body: (StoredEvent) throws -> Void
    ) async throws {
        // By the device's id (``deviceID(seq:)``), so that Citus sends it to the device's shard
        // (and every device's, 0) only; its number is the one asked for (a join with every
        // device hashed them all, O(fleet) a history: 2.8 ms against 1.05 ms at 10k devices).
        let id = try await deviceID(seq: device) ?? -1
        let rows = try await query("""
            SELECT \(unescaped: Self.columns)
            FROM event_log e JOIN apps a ON a.app_id = e.app_id
            LEFT JOIN (SELECT \(id)::bigint AS device_id, \(device)::bigint AS seq) d ON d.device_id = e.device_id AND e.device_id <> 0
            WHERE e.device_id IN (0, \(id))
              AND e.time_us >= \(fromMicros) AND e.time_us < \(beforeMicros)
            ORDER BY e.time_us, e.file_id, e.line
            """)
        for row in rows {
            let e = try event(row)
            try body(StoredEvent(
                id: 0, timeMicros: e.timeMicros, utcOffsetSeconds: e.utcOffsetSeconds,
                device: e.device == EncodedEvent.everyDevice ? nil : Int64(e.device), app: Int64(e.app), kind: e.kind,
                result: e.result, bytes: e.bytes, durationMs: e.durationMs, conditions: e.conditions))
        }
    }

    package func forEachEvent(afterID: Int64, devices: ClosedRange<Int64>, _ batches: ([EncodedEvent]) throws -> Void) async throws {
        guard let file = try await firstFile(after: afterID) else { return }
        // The devices' events and the publishes to every device, in ingest order; the rows of
        // one call (a batch of devices) are held at once. The devices as an array and only the
        // batch's rows of `devices` joined, so that the server reads the batch's events by index
        // (an `OR` of the two read every event, and a join with every device hashed them all:
        // O(fleet) a batch, 181 ms against 44 ms a batch of 256 at 10k devices).
        let rows = try await query("""
            SELECT \(unescaped: Self.columns)
            FROM event_log e JOIN apps a ON a.app_id = e.app_id
            LEFT JOIN (SELECT device_id, seq FROM devices WHERE seq BETWEEN \(devices.lowerBound) AND \(devices.upperBound)) d
                ON d.device_id = e.device_id AND e.device_id <> 0
            WHERE e.file_id >= \(file)
              AND e.device_id = ANY(ARRAY(SELECT device_id FROM devices WHERE seq BETWEEN \(devices.lowerBound) AND \(devices.upperBound)) || 0::bigint)
            ORDER BY e.file_id, e.line
            """)
        var batch: [EncodedEvent] = []
        batch.reserveCapacity(4096)
        for row in rows {
            batch.append(try event(row))
            if batch.count == 4096 {
                try batches(batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
        if !batch.isEmpty { try batches(batch) }
    }

    /// The columns ``event(_:)`` reads, in its order.
    private static let columns = """
        e.time_us, e.utc_offset_s::bigint, COALESCE(d.seq, -1), a.seq, e.kind::bigint, e.result::bigint, e.bytes, e.duration_ms,
        e.file_id, e.line, e.network::bigint, e.power::bigint, e.battery::bigint, e.low_power::bigint
        """

    /// The event in a row of ``columns``, numbered with `seq`s (device ``EncodedEvent/everyDevice``
    /// for a publish to every device).
    private func event(_ row: PostgresRow) throws -> EncodedEvent {
        let (timeMicros, offset, device, app, kindValue, resultValue, bytes, durationMs, file, line, network, power, battery, lowPower) =
            try row.decode((Int64, Int64, Int64, Int64, Int64, Int64?, Int64?, Int64?, Int64, Int64, Int64?, Int64?, Int64?, Int64?).self)
        let at = "file \(file), line \(line)"
        let (kind, result, conditions) = try log.decoded(
            kind: kindValue, result: resultValue, network: network, power: power, battery: battery, lowPower: lowPower, at: at)
        guard let app32 = Int32(exactly: app) else { throw log.unknown("app seq", app, at: at) }
        guard let device32 = Int32(exactly: device) else { throw log.unknown("device seq", device, at: at) }
        return EncodedEvent(
            timeMicros: timeMicros, utcOffsetSeconds: Int32(truncatingIfNeeded: offset), device: device32, app: app32,
            kind: kind, result: result, bytes: bytes, durationMs: durationMs, line: line, conditions: conditions)
    }

    /// The first file whose events are numbered above `afterID`; `nil` when there is none.
    private func firstFile(after afterID: Int64) async throws -> Int64? {
        try await scalar("SELECT min(file_id) FROM files WHERE first_event >= \(afterID) AND rows > 0")
    }

}
