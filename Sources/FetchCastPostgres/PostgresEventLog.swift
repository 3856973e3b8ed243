import FetchCastCore
import FetchCastStore
import FetchCastTrace
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// An event log in a PostgreSQL database (15 or later): the engine behind
/// `--db postgres://USER@HOST:PORT/DATABASE` for `ingest`, `stats` and `devices`.
///
/// One connection per instance; appends use `COPY` inside one transaction per file, every value
/// bound or streamed, never written into SQL. The layout is ``PostgresSchema``'s.
///
/// A connection the server closed (a restart, `pg_terminate_backend`, a network failure) is
/// replaced at the next use that may start afresh (``usableConnection()``), attempts spaced by a
/// capped exponential backoff; meanwhile, and for the statement the loss interrupted, uses fail
/// with a ``StoreError`` that ``StoreError/isUnavailable``.
public final class PostgresEventLog: EventLogWriter, Sendable {
    /// The URL without its password.
    public let location: String
    /// The connection in use, and how it is replaced when lost.
    private let link: Mutex<Link>
    /// How a new connection is opened (the password included: never printed).
    private let configuration: PostgresConnection.Configuration
    let logger: Logger
    /// Whether the database has the Citus extension (read when opened): the one statement
    /// Citus cannot plan is sent in a form it can (``PostgresDuplicateFilter``).
    let citus: Bool

    /// The connection in use (perhaps lost: ``usableConnection()`` replaces a lost one).
    var connection: PostgresConnection { link.withLock { $0.connection } }

    /// The connection and the state of its replacement.
    private struct Link: Sendable {
        var connection: PostgresConnection
        /// What the connection's `COPY`s need to know of it.
        var watch: ConnectionWatch
        /// A statement failed as the connection was lost (it may not look closed yet).
        var lost = false
        /// Failed attempts to connect again since the last success.
        var failures = 0
        /// No attempt before this instant (the backoff); `nil`: at once.
        var nextAttempt: ContinuousClock.Instant?
        /// Why the last attempt failed.
        var lastFailure = ""

        init(connection: PostgresConnection) {
            self.connection = connection
            watch = ConnectionWatch(connection)
        }
    }

    /// The watch of `c` while it is the connection in use; `nil` once it was replaced.
    func watch(of c: PostgresConnection) -> ConnectionWatch? {
        link.withLock { $0.connection === c ? $0.watch : nil }
    }

    /// `q` on `c`: its rows, or a connection loss (`ChannelError.ioOnClosedChannel`) once `c`'s
    /// close has completed first (``ConnectionWatch/answered(_:)``: PostgresNIO 1.x never answers
    /// a statement written to a closed channel, so a statement sent as the connection is lost
    /// would otherwise wait for ever). `c` must be this log's connection; one it has replaced is
    /// lost.
    @discardableResult
    func statement(_ q: PostgresQuery, on c: PostgresConnection) async throws -> PostgresRowSequence {
        guard let watch = watch(of: c) else { throw ChannelError.ioOnClosedChannel }
        let logger = self.logger
        return try await watch.answered { try await c.query(q, logger: logger) }
    }

    /// The first wait after a failed attempt to connect again, doubled at each further failure
    /// up to ``maxBackoff``: a server back is found within ``maxBackoff`` of its return.
    static let firstBackoff: Duration = .milliseconds(100)
    static let maxBackoff: Duration = .seconds(2)

    private init(
        location: String, connection: PostgresConnection, configuration: PostgresConnection.Configuration, logger: Logger, citus: Bool
    ) {
        self.location = location
        link = Mutex(Link(connection: connection))
        self.configuration = configuration
        self.logger = logger
        self.citus = citus
    }

    /// The connection, or a new one in place of a lost one: call it where a use may start on
    /// another session (outside a transaction and a session lock).
    /// - Throws: ``StoreError`` (``StoreError/isUnavailable``) while the server cannot be
    ///   reached: at once within the backoff after a failed attempt, else when the attempt fails.
    func usableConnection() async throws -> PostgresConnection {
        if let kept = try keptConnection() { return kept }
        let result: Result<PostgresConnection, any Error>
        do { result = .success(try await replacement().get()) } catch { result = .failure(error) }
        return try recorded(result)
    }

    /// The connection while it is usable; `nil` when it was lost and an attempt to replace it
    /// is due. - Throws: ``StoreError`` within the backoff after a failed attempt.
    private func keptConnection() throws(StoreError) -> PostgresConnection? {
        let (current, lost, nextAttempt, lastFailure) = link.withLock { ($0.connection, $0.lost, $0.nextAttempt, $0.lastFailure) }
        guard lost || current.isClosed else { return current }
        if let nextAttempt, ContinuousClock.now < nextAttempt { throw unreachable(lastFailure) }
        return nil
    }

    /// Closes the lost connection (a connection asserts it was closed when freed), then opens
    /// another on its event loop.
    private func replacement() -> EventLoopFuture<PostgresConnection> {
        let lost = closing()
        let (configuration, logger) = (self.configuration, self.logger)
        return lost.close().recover { _ in }.flatMap {
            PostgresConnection.connect(on: lost.eventLoop, configuration: configuration, id: 1, logger: logger)
        }
    }

    /// Keeps a new connection, or records a failed attempt and when the next may be made.
    private func recorded(_ attempt: Result<PostgresConnection, any Error>) throws(StoreError) -> PostgresConnection {
        switch attempt {
        case .success(let fresh):
            link.withLock { $0 = Link(connection: fresh) }
            return fresh
        case .failure(let error):
            let reason = Self.storeError(error, location: location, doing: "could not connect").message
            link.withLock { l in
                l.failures += 1
                l.nextAttempt = ContinuousClock.now + min(Self.maxBackoff, Self.firstBackoff * (1 << min(l.failures - 1, 16)))
                l.lastFailure = reason
            }
            throw unreachable(reason)
        }
    }

    private func unreachable(_ reason: String) -> StoreError {
        StoreError(path: location, message: "the connection to the database was lost and it cannot be reached (\(reason)); try again", isUnavailable: true)
    }

    /// Connects to the database and checks (or, with `create`, creates or upgrades) its schema.
    /// - Parameters:
    ///   - location: Where the database is.
    ///   - create: Whether a database without FetchCast's tables gets them (writers); readers
    ///     pass `false` and are refused when there are none.
    ///   - upgrade: Whether a database with an older FetchCast schema is upgraded (readers that
    ///     also write, as `predict` does), rather than refused.
    /// - Returns: The open log; ``close()`` it when done.
    /// - Throws: `StoreError` when the server cannot be reached, refuses the login, holds a
    ///   newer schema, or holds tables that are not FetchCast's.
    public static func open(_ location: PostgresLocation, create: Bool, upgrade: Bool = false) async throws -> PostgresEventLog {
        let where_ = location.description
        var configuration: PostgresConnection.Configuration
        if let directory = location.socketDirectory {
            // libpq's convention: the socket `.s.PGSQL.PORT` in that directory; no TLS on it.
            configuration = PostgresConnection.Configuration(
                unixSocketPath: directory + "/.s.PGSQL.\(location.port)", username: location.user,
                password: location.password, database: location.database)
        } else {
            let tls: PostgresConnection.Configuration.TLS
            if let tlsConfiguration = location.tlsConfiguration {
                do { tls = .require(try NIOSSLContext(configuration: tlsConfiguration)) } catch {
                    let roots = location.sslRootCert.map { "sslrootcert \($0)" } ?? "the system's certificates"
                    throw StoreError(path: where_, message: "could not set up TLS (\(error)); check \(roots) or use sslmode=disable")
                }
            } else {
                tls = .disable
            }
            configuration = PostgresConnection.Configuration(
                host: location.host, port: location.port, username: location.user, password: location.password,
                database: location.database, tls: tls)
        }
        configuration.options.additionalStartupParameters = [("application_name", location.applicationName)]
        // A server that does not answer is found unavailable within seconds, not ten.
        configuration.options.connectTimeout = .seconds(3)
        // No log output: a connection's messages are not the CLI's, and none may carry a password.
        let logger = Logger(label: "fetchcast.postgres", factory: { _ in SwiftLogNoOpLogHandler() })
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        } catch {
            // The server is away, or refuses this login now: a service asks again later.
            var failure = Self.storeError(error, location: where_, doing: "could not connect")
            failure.isUnavailable = true
            throw failure
        }
        let log: PostgresEventLog
        do {
            let citus = try await connection.query("SELECT count(*) FROM pg_catalog.pg_extension WHERE extname = 'citus'", logger: logger)
                .collect().first?.decode(Int64.self) ?? 0
            log = PostgresEventLog(location: where_, connection: connection, configuration: configuration, logger: logger, citus: citus > 0)
        } catch {
            try? await connection.close()
            var failure = Self.storeError(error, location: where_, doing: "could not read the database's extensions")
            failure.isUnavailable = Self.isConnectionLoss(error)
            throw failure
        }
        do {
            try await log.openSchema(create: create, upgrade: upgrade)
        } catch {
            await log.close()
            throw log.mapped(error)
        }
        return log
    }

    /// Closes the connection.
    public func close() async {
        try? await closing().close()
    }

    /// The connection, marked as about to be closed by this process: a `COPY` still on it
    /// writes no more (``ConnectionWatch``).
    func closing() -> PostgresConnection {
        let (connection, watch) = link.withLock { ($0.connection, $0.watch) }
        watch.requestClose()
        return connection
    }

    // MARK: Schema

    /// Checks the schema version; with `create`, creates or upgrades the tables under the
    /// migration lock; with `upgrade`, upgrades older tables but creates none.
    private func openSchema(create: Bool, upgrade: Bool) async throws {
        let version = try await schemaVersion()
        if let version, version > PostgresSchema.currentVersion {
            throw StoreError(path: location, message: "the database has FetchCast schema version \(version), newer than this fetchcast (\(PostgresSchema.currentVersion)); upgrade fetchcast")
        }
        if version == PostgresSchema.currentVersion { return }
        // A reader reads an older version whose tables it needs are as now (it writes nothing).
        if !create && !upgrade, let version, version >= PostgresSchema.oldestReadable { return }
        guard create || (upgrade && version != nil) else {
            if version == nil {
                throw StoreError(path: location, message: "no FetchCast store in this database (no fetchcast_meta table); `fetchcast ingest FILE --db \(location)` creates one")
            }
            throw StoreError(path: location, message: "the database has FetchCast schema version \(version!), older than this fetchcast (\(PostgresSchema.currentVersion)); run `fetchcast ingest` or `fetchcast model` once on it to upgrade it")
        }
        try await transaction { c in
            try await self.statement("SELECT pg_advisory_xact_lock(\(PostgresSchema.migrationLock))", on: c)
            // Again under the lock: another process may have created it meanwhile.
            var found = try await self.schemaVersion(on: c)
            if found == nil {
                let tables = try await self.scalar(
                    "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = current_schema()", on: c)
                if tables > 0 {
                    throw StoreError(path: self.location, message: "the database has tables but is not a FetchCast store; pass another --db")
                }
                found = 0
            }
            guard var version = found, version <= PostgresSchema.currentVersion else { return }
            while version < PostgresSchema.currentVersion {
                for statement in PostgresSchema.migrations[Int(version)] {
                    try await self.statement(PostgresQuery(unsafeSQL: statement), on: c)
                }
                version += 1
                try await self.statement(
                    "INSERT INTO fetchcast_meta(key, value) VALUES ('schema_version', \(version)) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value", on: c)
            }
        }
    }

    /// The schema version, `nil` when the database has no `fetchcast_meta` table.
    private func schemaVersion(on c: PostgresConnection? = nil) async throws -> Int64? {
        let c = c ?? connection
        let exists = try await scalar("SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = current_schema() AND tablename = 'fetchcast_meta'", on: c)
        guard exists > 0 else { return nil }
        return try await scalar("SELECT COALESCE(max(value), 0) FROM fetchcast_meta WHERE key = 'schema_version'", on: c)
    }

    // MARK: Reads

    public func stats() async throws -> StoreStats {
        try await readSnapshot { c in
            let files = try await self.scalar("SELECT count(*) FROM files", on: c)
            let rejected = try await self.scalar("SELECT COALESCE(sum(rejected), 0)::bigint FROM files", on: c)
            var byKind: [Int64: Int64] = [:]
            for try await (kind, n) in try await self.statement("SELECT kind::bigint, sum(n)::bigint FROM file_counts GROUP BY kind", on: c)
                .decode((Int64, Int64).self) {
                byKind[kind] = n
            }
            let devices = try await self.scalar("SELECT count(DISTINCT device_id) FROM file_counts WHERE device_id <> 0", on: c)
            let apps = try await self.scalar(
                "SELECT count(DISTINCT app_id) FROM file_counts WHERE kind <> \(Int64(EventKind.state.rawValue))", on: c)
            var spanMicros: (first: Int64, last: Int64)?
            for try await (lo, hi) in try await self.statement("SELECT min(first_us), max(last_us) FROM file_counts", on: c)
                .decode((Int64?, Int64?).self) {
                if let lo, let hi { spanMicros = (lo, hi) }
            }
            let deviceDays = try await self.scalar("SELECT count(*) FROM (SELECT DISTINCT device_id, day FROM file_days) d", on: c)
            var stats = StoreStats(
                files: files, rejected: rejected, eventsByKind: byKind, devices: devices, apps: apps, spanMicros: spanMicros,
                activeDeviceDays: deviceDays)
            for try await user in try await self.statement("SELECT current_user::text", on: c).decode(String.self) {
                stats.connectedAs = user
            }
            return stats
        }
    }

    public func devices(top: Int) async throws -> [DeviceSummary] {
        let launchKind = Int64(EventKind.launch.rawValue)
        let top64 = Int64(top)
        return try await readSnapshot { c in
            let rows = try await self.statement("""
                WITH per_app AS (
                    SELECT f.device_id, a.name AS app, sum(f.n) AS events,
                           sum(CASE WHEN f.kind = \(launchKind) THEN f.n ELSE 0 END) AS launches,
                           min(f.first_us) AS first_us, max(f.last_us) AS last_us
                    FROM file_counts f JOIN apps a ON a.app_id = f.app_id
                    WHERE f.device_id <> 0
                    GROUP BY f.device_id, a.name
                ), ranked AS (
                    SELECT device_id, app, launches,
                           sum(events) OVER device AS device_events, sum(launches) OVER device AS device_launches,
                           min(first_us) OVER device AS first_us, max(last_us) OVER device AS last_us,
                           row_number() OVER (PARTITION BY device_id ORDER BY launches DESC, app) AS rank
                    FROM per_app
                    WINDOW device AS (PARTITION BY device_id)
                )
                SELECT d.name, r.device_events::bigint, r.device_launches::bigint, r.first_us, r.last_us, r.app,
                       r.launches::bigint, r.device_id
                FROM ranked r JOIN devices d ON d.device_id = r.device_id
                WHERE r.rank <= GREATEST(\(top64), 1)
                ORDER BY d.name, r.device_id, r.rank
                """, on: c)
            var out: [DeviceSummary] = []
            var lastID: Int64?
            for try await (name, events, launches, firstUs, lastUs, app, appLaunches, id) in rows.decode(
                (String, Int64, Int64, Int64, Int64, String, Int64, Int64).self) {
                // Grouped by id, not by name: Swift's `==` treats canonically equivalent names as one.
                if id != lastID {
                    lastID = id
                    out.append(DeviceSummary(
                        device: name, events: events, launches: launches,
                        firstEvent: Timestamp.format(micros: firstUs, utcOffsetSeconds: 0),
                        lastEvent: Timestamp.format(micros: lastUs, utcOffsetSeconds: 0), topApps: []))
                }
                if appLaunches > 0 && out[out.count - 1].topApps.count < top {
                    out[out.count - 1].topApps.append(.init(app: app, launches: appLaunches))
                }
            }
            return out
        }
    }

    public func sortedDeviceNames() async throws -> [String] {
        try await strings("SELECT name FROM devices ORDER BY name")
    }

    public func sortedAppNames() async throws -> [String] {
        try await strings("SELECT name FROM apps ORDER BY name")
    }

    public func fileCount() async throws -> Int64 {
        do { return try await scalar("SELECT count(*) FROM files", on: try await usableConnection()) } catch { throw mapped(error) }
    }

    // MARK: Helpers

    private func strings(_ query: PostgresQuery) async throws -> [String] {
        do {
            var out: [String] = []
            for try await name in try await statement(query, on: try await usableConnection()).decode(String.self) { out.append(name) }
            return out
        } catch {
            throw mapped(error)
        }
    }

    /// The one `bigint` a query returns.
    func scalar(_ query: PostgresQuery, on c: PostgresConnection) async throws -> Int64 {
        for try await value in try await statement(query, on: c).decode(Int64.self) { return value }
        return 0
    }

    /// Runs `body` in a read-only transaction that sees one snapshot (`REPEATABLE READ`).
    func readSnapshot<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        try await inTransaction(begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", body)
    }

    /// Runs `body` in a read-write transaction: committed when it returns, rolled back when it
    /// throws (its error is rethrown as it was, a `StoreError` for a server's error).
    func transaction<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        try await inTransaction(begin: "BEGIN", body)
    }

    /// Runs `body` between `begin` and `COMMIT`, or `ROLLBACK` when it throws.
    private func inTransaction<T: Sendable>(begin: PostgresQuery, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        let connection: PostgresConnection
        do {
            connection = try await usableConnection()
            try await statement(begin, on: connection)
        } catch {
            throw mapped(error)
        }
        do {
            let value = try await body(connection)
            // (PostgresNIO would never answer a statement sent on a closed connection.)
            if connection.isClosed {
                throw StoreError(path: location, message: "the connection to the database was lost before COMMIT (nothing was stored); try again",
                                 isUnavailable: true)
            }
            try await statement("COMMIT", on: connection)
            return value
        } catch {
            // Not on a closed connection: once its close has completed (as a COPY that lost
            // its connection waits for, CopyStream), PostgresNIO drops a query sent on it and
            // never answers it.
            if !connection.isClosed { _ = try? await statement("ROLLBACK", on: connection) }
            throw mapped(error)
        }
    }

    /// A server or connection error as a `StoreError` (``StoreError/isUnavailable`` when the
    /// connection was lost: then the next use opens another); any other error as it was.
    func mapped(_ error: any Error) -> any Error {
        guard error is PSQLError || error is ChannelError else { return error }
        var mapped = Self.storeError(error, location: location, doing: "failed")
        if Self.isConnectionLoss(error) {
            link.withLock { $0.lost = true }
            mapped.isUnavailable = true
            mapped.message = "the connection to the database was lost (\(mapped.message)); try again"
        }
        return mapped
    }

    /// Whether `error` says the connection is gone: closed by either side, failed, or ended by
    /// the server (SQLSTATE class 08, connection exception; 57P01…57P03, a shutdown or restart).
    static func isConnectionLoss(_ error: any Error) -> Bool {
        if error is ChannelError { return true }
        guard let e = error as? PSQLError else { return false }
        switch e.code {
        case .serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown: return true
        case .server:
            guard let state = e.serverInfo?[.sqlState] else { return false }
            return state.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(state)
        default: return false
        }
    }

    /// A `StoreError` naming what the server said (its message and SQLSTATE) or why the
    /// connection failed; never the password (PSQLError's own description hides details).
    static func storeError(_ error: any Error, location: String, doing: String) -> StoreError {
        guard let e = error as? PSQLError else { return StoreError(path: location, message: "\(doing): \(error)") }
        if let info = e.serverInfo, let message = info[.message] {
            let state = info[.sqlState].map { " (SQLSTATE \($0))" } ?? ""
            return StoreError(path: location, message: "PostgreSQL: \(message)\(state)")
        }
        if let underlying = e.underlying {
            return StoreError(path: location, message: "\(doing): \(underlying); is the server running, and does the URL name its host and port?")
        }
        if e.code == .authMechanismRequiresPassword {
            return StoreError(
                path: location,
                message: "\(doing): the server asks for a password and none was given; set PGPASSWORD, add the password to ~/.pgpass, or put it in the URL in FETCHCAST_DB")
        }
        return StoreError(path: location, message: "\(doing): \(e.code)")
    }
}
