import FetchCastCore
import FetchCastStore
import PostgresNIO

/// What `fetchcast serve` asks of a PostgreSQL store besides the model layer's reads and state.
extension PostgresModelStore: ServiceStore {
    /// ``PostgresEventLog/append(path:name:options:)``: one transaction, durable at commit (the
    /// server's `synchronous_commit`); rows whose events the database already held are skipped
    /// and counted, as on SQLite (``DuplicateFilter``'s rule), unless the options keep them.
    ///
    /// A connection lost during the append's `COPY` ends the `COPY` once its close has completed
    /// (``CopyStream``), and the append fails as ``StoreError/isUnavailable``, nothing committed.
    /// A statement sent as the close completes is never answered (PostgresNIO drops it): once
    /// the connection has been closed for 2 s, the wait is given up (its task cancelled) with
    /// the same error.
    package func ingest(path: String, name: String, options: IngestOptions) async throws -> FileIngestResult {
        let log = self.log
        let options = UncheckedOptions(value: options)
        return try await GivingUp.run(
            { try await log.append(path: path, name: name, options: options.value) }, after: 2,
            of: { log.connection.isClosed },
            throwing: {
                StoreError(path: log.location, message: "the connection to the database was lost during the ingest (nothing was stored); try again",
                           isUnavailable: true)
            })
    }

    package func deviceSummaries(after: String?, limit: Int) async throws -> [DeviceListing] {
        // Names compare byte for byte (`COLLATE "C"`), as SQLite's do.
        let rows = try await query("""
            SELECT d.name, sum(c.n)::bigint, min(c.first_us), max(c.last_us)
            FROM devices d JOIN file_counts c ON c.device_id = d.device_id
            WHERE \(after)::text IS NULL OR d.name > \(after)::text
            GROUP BY d.name ORDER BY d.name LIMIT \(Int64(max(0, limit)))
            """)
        return try rows.map { row in
            let (name, events, first, last) = try row.decode((String, Int64, Int64, Int64).self)
            return DeviceListing(device: name, events: events, firstMicros: first, lastMicros: last)
        }
    }

    package func devicesWithEvents(after micros: Int64) async throws -> Int64 {
        try await scalar("""
            SELECT count(*) FROM (SELECT 1 FROM file_counts WHERE device_id <> 0 GROUP BY device_id HAVING max(last_us) > \(micros)) s
            """) ?? 0
    }

    /// The database's size (`pg_database_size`).
    package var storeBytes: Int64 {
        get async { (try? await scalar("SELECT pg_database_size(current_database())")) ?? 0 }
    }

    /// How a service opens its connections to the database at `location`: each one its own
    /// connection (as ``open(_:)``, upgrading an older schema), sharing what devices' ids were
    /// read (``DeviceIDsBySeq``); the writer creates FetchCast's tables in an empty database, as
    /// `fetchcast ingest` does.
    package static func serviceStorage(_ location: PostgresLocation) -> ServiceStorage {
        let deviceIDs = DeviceIDsBySeq()
        var storage = ServiceStorage(location: location.description) { writer in
            let log = try await PostgresEventLog.open(location, create: writer, upgrade: true)
            return PostgresModelStore(log: log, deviceIDs: deviceIDs)
        }
        // A plan read from the database is a round trip; from memory, one shared check.
        storage.plansInMemoryBytes = 64 << 20
        return storage
    }
}

/// Ingest options handed to the append's task, which runs while the ingest waits for it (its
/// callbacks are called from that task, one at a time, and never after the ingest returned
/// but when it gave up on a lost connection, when the task calls nothing more).
private struct UncheckedOptions: @unchecked Sendable {
    var value: IngestOptions
}
