#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A FetchCast store: one SQLite file in WAL mode holding ingested events, the files they came
/// from, and persisted model state.
///
/// The stable interface for other tools is the SQL view `events` (docs/store.md); the tables
/// behind it may change between schema versions.
public final class Store {
    /// The path of the database file.
    public let path: String
    /// The connection.
    let connection: Connection
    /// Whether the store was opened read-only (``Store/Access``): every write fails with
    /// `SQLITE_READONLY`.
    public let isReadOnly: Bool

    /// The default path, `./fetchcast.sqlite`.
    public static let defaultPath = "fetchcast.sqlite"

    /// Opens a store, creating and migrating it when `create` is true.
    ///
    /// - Parameters:
    ///   - path: The database file.
    ///   - create: Create the file and schema if missing (writers); without, a missing file is
    ///     an error, not an empty store: a mistyped path must not read as a store with nothing in it.
    /// - Throws: ``StoreError`` when the file is missing (without `create`), is not a FetchCast
    ///   store or is newer than this build.
    public init(path: String, create: Bool = true) throws(StoreError) {
        self.path = path
        isReadOnly = false
        if !create && access(path, F_OK) != 0 {
            throw StoreError(path: path, message: "no such store (the file does not exist); ingesting a trace creates one (fetchcast ingest)")
        }
        connection = try Connection(path: path, create: create)
        connection.setBusyTimeout(milliseconds: 600_000)
        // Before switching to WAL (which rewrites the file header): a database that is not a
        // FetchCast store must be refused untouched.
        try Store.refuseForeignDatabase(connection, path: path)
        try Store.refuseCorrupt(connection, path: path)
        try Store.enableWAL(connection, path: path)
        try connection.execute("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=OFF; PRAGMA temp_store=MEMORY;")
        let version = try connection.scalarInt("PRAGMA user_version")
        if version > Schema.currentVersion {
            throw StoreError(path: path, message: "the store has schema version \(version), newer than this fetchcast (\(Schema.currentVersion)); upgrade fetchcast")
        }
        if version < Schema.currentVersion {
            try Store.migrate(connection, path: path)
        }
    }

    /// A store on a connection opened read-only (``init(path:access:)``).
    init(path: String, readOnlyConnection: Connection) {
        self.path = path
        connection = readOnlyConnection
        isReadOnly = true
    }

    /// Throws when the file is not an SQLite database, or is one with tables but no FetchCast
    /// schema version. Reads only.
    static func refuseForeignDatabase(_ c: Connection, path: String) throws(StoreError) {
        do throws(StoreError) {
            // One statement, so both numbers come from one snapshot: read apart, a store that
            // another process is creating at this moment could show its tables but not yet
            // its schema version, and be refused as foreign.
            let check = try c.prepare(
                "SELECT (SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_master)")
            guard try check.step() else { return }
            if check.int(0) == 0, check.int(1) > 0 {
                throw StoreError(path: path, message: "the database has tables but is not a FetchCast store; pass another --db")
            }
        } catch {
            if error.result == .notADatabase {
                throw StoreError(path: path, message: "the file is not a FetchCast store (not an SQLite database); pass another --db", code: error.code)
            }
            throw error
        }
    }

    /// Stores up to this size (the file and its write-ahead log) are checked with SQLite's
    /// `quick_check` when opened to write: about a tenth of a second a 64 MiB store on this
    /// project's 2-core machines, once a command. Larger ones are not checked on open.
    static let quickCheckLimitBytes: Int64 = 64 << 20

    /// Throws when a store opened to write fails SQLite's `quick_check` (a damaged page, cells
    /// out of order, …): writing into it would report success while the events went into a
    /// corrupt file. Nothing is changed. Skipped for stores over ``quickCheckLimitBytes``.
    static func refuseCorrupt(_ c: Connection, path: String) throws(StoreError) {
        var size: Int64 = 0
        for file in [path, path + "-wal"] {
            var st = stat()
            if stat(file, &st) == 0 { size += Int64(st.st_size) }
        }
        guard size > 0, size <= quickCheckLimitBytes else { return }
        var finding = "ok"
        do throws(StoreError) {
            let check = try c.prepare("PRAGMA quick_check(1)")
            if try check.step() { finding = check.text(0) }
        } catch {
            switch error.result {
            case .busy, .locked: return  // another process writes it now: it checked on its own open
            case .corrupt, .notADatabase: finding = error.message
            default: throw error
            }
        }
        guard finding != "ok" else { return }
        throw StoreError(
            path: path,
            message: "the store is damaged (SQLite's quick_check: \(finding.split(separator: "\n").first ?? "")), so nothing was written to it; "
                + "recover what it holds into a new file with `sqlite3 \(path) .recover | sqlite3 recovered.sqlite` and use --db recovered.sqlite, "
                + "or ingest the traces again into a new store")
    }

    /// Switches to WAL, retrying while another process holds a lock (two first opens at once).
    private static func enableWAL(_ c: Connection, path: String) throws(StoreError) {
        var delay: UInt32 = 1000
        for _ in 0..<2000 {
            do throws(StoreError) {
                let s = try c.prepare("PRAGMA journal_mode=WAL")
                if try s.step() {
                    let mode = s.text(0)
                    if mode == "wal" { return }
                    if mode == "memory" { return }
                }
            } catch {
                switch error.result {
                case .busy, .locked: break  // retried below
                case .notADatabase:
                    throw StoreError(path: path, message: "the file is not a FetchCast store (not an SQLite database); pass another --db", code: error.code)
                default: throw error
                }
            }
            usleep(delay)
            delay = min(delay * 2, 50_000)
        }
        throw StoreError(path: path, message: "could not switch the store to WAL mode: another process keeps it locked")
    }

    private static func migrate(_ c: Connection, path: String) throws(StoreError) {
        try c.transaction(.immediate) { () throws(StoreError) in
            var version = try c.scalarInt("PRAGMA user_version")
            if version == 0 {
                // A non-empty database that is not ours must not be touched.
                let tables = try c.scalarInt("SELECT count(*) FROM sqlite_master")
                if tables > 0 {
                    throw StoreError(path: path, message: "the database has tables but is not a FetchCast store; pass another --db")
                }
            }
            let found = version
            while version < Schema.currentVersion {
                do throws(StoreError) {
                    try c.execute(Schema.migrations[Int(version)])
                } catch {
                    // The transaction rolls back: the store is left as it was.
                    guard version > 0 else { throw error }
                    throw StoreError(
                        path: path,
                        message: "the store has schema version \(found), older than this fetchcast's \(Schema.currentVersion), but its tables are not what version \(version) has, so it cannot be upgraded (step \(version) → \(version + 1) failed: \(error.message)); it was left as it was: open it with the fetchcast that wrote it, or ingest its traces into a new store (--db NEW.sqlite)",
                        code: error.code)
                }
                version += 1
                try c.execute("PRAGMA user_version=\(version)")
            }
        }
    }

    /// Runs `body` in a transaction (`BEGIN IMMEDIATE`: takes the write lock at once).
    package func writeTransaction<T>(_ body: () throws -> T) throws -> T {
        try connection.transaction(.immediate, storeError: { $0 }, body)
    }

    /// Runs `body` in a read transaction, so that every query in it sees one snapshot; inside
    /// a transaction already, in that one.
    package func readTransaction<T>(_ body: () throws -> T) throws -> T {
        if connection.inTransaction { return try body() }
        return try connection.transaction(.deferred, storeError: { $0 }, body)
    }

    /// ``writeTransaction(_:)-(()->T)`` for the model layer's bodies, which await the seam.
    package func writeTransaction<T>(_ body: () async throws -> T) async throws -> T {
        try await connection.transaction(.immediate, body)
    }

    /// ``readTransaction(_:)-(()->T)`` for the model layer's bodies, which await the seam.
    package func readTransaction<T>(_ body: () async throws -> T) async throws -> T {
        if connection.inTransaction { return try await body() }
        return try await connection.transaction(.deferred, body)
    }
}
