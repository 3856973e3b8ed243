import ArgumentParser
import FetchCastPostgres
import FetchCastStore

#if canImport(Glibc)
import Glibc
#endif

/// `--db`, shared by every subcommand that uses a store.
struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The store file, or postgres://USER@HOST:PORT/DATABASE (docs/postgres.md) (default: $FETCHCAST_DB, else ./fetchcast.sqlite).", valueName: "path"))
    var db: String?

    func validate() throws {
        if let db, db.isEmpty {
            throw ValidationError("--db is empty; name a store file (e.g. --db fetchcast.sqlite) or a postgres:// URL, or leave --db out for the default store.")
        }
    }

    var path: String {
        if let db { return db }
        if let env = getenv("FETCHCAST_DB"), env.pointee != 0 { return String(cString: env) }
        return Store.defaultPath
    }

    /// The SQLite store a command without `--db` would use ($FETCHCAST_DB, else
    /// ./fetchcast.sqlite), for the outputs of commands that write files beside it; `nil` when
    /// $FETCHCAST_DB names a PostgreSQL database.
    static var storeInUse: String? {
        var path = Store.defaultPath
        if let env = getenv("FETCHCAST_DB"), env.pointee != 0 { path = String(cString: env) }
        return PostgresLocation.isURL(path) ? nil : path
    }

    /// Whether the store is a PostgreSQL database (`postgres://…`) rather than an SQLite file.
    var isPostgres: Bool { PostgresLocation.isURL(path) }

    /// The store as output names it: the path, or the URL without its password.
    var displayName: String {
        guard isPostgres else { return path }
        return (try? PostgresLocation(url: path, environment: [:]).description) ?? PostgresLocation.redacted(path)
    }

    /// Opens the event log to change it, on either engine: with `create` (`ingest`), an SQLite
    /// file is created when missing (as ``open(create:)`` does) and a PostgreSQL database gets
    /// its tables; without (`forget`), the store must exist (a PostgreSQL one with an older
    /// FetchCast schema is upgraded).
    func openLog(create: Bool) async throws -> any EventLogWriter {
        guard isPostgres else { return try open(create: create) }
        return try await openPostgres(create: create, upgrade: true)
    }

    /// Opens the event log to read it or its events, on either engine (SQLite as ``open(_:)`` does).
    func openLog(_ access: Store.Access) async throws -> any EventLogScanner {
        guard isPostgres else { return try open(access) }
        return try await openPostgres(create: false)
    }

    /// Opens the event log to read it (``openLog(_:)``), runs `body` with it and closes it; what
    /// `body` throws ends the command with its message.
    func withLog<T>(_ access: Store.Access, _ body: (any EventLogScanner) async throws -> T) async throws -> T {
        try await closing(try await openLog(access), body)
    }

    /// Opens the event log to change it (``openLog(create:)``), runs `body` with it and closes
    /// it; what `body` throws ends the command with its message.
    func withLog<T>(create: Bool, _ body: (any EventLogWriter) async throws -> T) async throws -> T {
        try await closing(try await openLog(create: create), body)
    }

    private func closing<Log: EventLogReader, T>(_ log: Log, _ body: (Log) async throws -> T) async throws -> T {
        let result = await Result(awaiting: { try await body(log) })
        await log.close()
        do { return try result.get() } catch { throw FetchCast.fail(String(describing: error)) }
    }

    /// Opens the store for the model layer (`model`, `predict`, `export model|cousage|predictions`)
    /// on either engine, runs `body` with it and closes it: SQLite as ``open(_:)`` does; a
    /// PostgreSQL database with an older FetchCast schema is upgraded (it keeps model state).
    func withModelStore<T>(_ access: Store.Access, _ body: (any ModelStore) async throws -> T) async throws -> T {
        guard isPostgres else { return try await body(try open(access)) }
        let store: PostgresModelStore
        do {
            store = try await PostgresModelStore.open(try PostgresLocation(url: path))
        } catch let error as StoreError {
            throw FetchCast.fail(error.description)
        }
        let result = await Result(awaiting: { try await body(store) })
        await store.close()
        return try result.get()
    }

    private func openPostgres(create: Bool, upgrade: Bool = false) async throws -> PostgresEventLog {
        do {
            return try await PostgresEventLog.open(try PostgresLocation(url: path), create: create, upgrade: upgrade)
        } catch let error as StoreError {
            throw FetchCast.fail(error.description)
        }
    }

    /// Opens the SQLite store to write it: `ingest` creates it (`create`); other writers need it
    /// to exist.
    private func open(create: Bool) throws -> Store {
        if !create { try requireExisting() }
        try refuseWhatCannotBeAStore()
        var st = stat()
        if stat(path, &st) == 0, !Store.isWritable(path: path) {
            throw FetchCast.fail("\(path): the store is read-only (the file or its folder cannot be written), and this command changes it; run it on a writable copy")
        }
        do {
            return try Store(path: path, create: create)
        } catch {
            throw FetchCast.fail(error.description)
        }
    }

    /// Opens an existing SQLite store for a command that reads it: read-only when it only reads
    /// or when the store cannot be written (``Store/Access``).
    private func open(_ access: Store.Access) throws -> Store {
        try requireExisting()
        try refuseWhatCannotBeAStore()
        do {
            return try Store(path: path, access: access)
        } catch {
            throw FetchCast.fail(error.description)
        }
    }

    /// Refuses a path that exists but cannot be a store, before SQLite reports it in its own
    /// words ("disk I/O error [COMMIT]" for /dev/null, "schema version 0" for /proc/self/status):
    /// a directory, a device or a pipe, or a file with bytes that are not an SQLite database's
    /// (an empty file is a new store).
    func refuseWhatCannotBeAStore() throws {
        var st = stat()
        guard stat(path, &st) == 0 else { return }
        switch st.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR:
            throw FetchCast.fail("\(path): is a directory; --db names the store's file (e.g. --db \(path == "/" ? "" : path)/fetchcast.sqlite)")
        default:
            throw FetchCast.fail("\(path): is not a regular file (a device, a pipe or a socket); a store is an SQLite file: pass --db with a file's path")
        }
        let fd = openForReading(path)
        guard fd >= 0 else { return }  // SQLite names what stops it from opening the file
        defer { close(fd) }
        var header = [UInt8](repeating: 0, count: 16)
        let count = header.withUnsafeMutableBytes { read(fd, $0.baseAddress, 16) }
        if count > 0 && (count < 16 || header != Array("SQLite format 3\0".utf8)) {
            throw FetchCast.fail("\(path): the file is not a FetchCast store (not an SQLite database); pass another --db (a new path creates a store)")
        }
    }

    /// A store path that does not exist is an error (a typo must not read as an empty store).
    private func requireExisting() throws {
        var st = stat()
        guard stat(path, &st) == 0 else {
            let how = db != nil ? "--db" : getenv("FETCHCAST_DB").map { $0.pointee != 0 } == true ? "$FETCHCAST_DB" : "the default store"
            throw FetchCast.fail("\(path): no such store (\(how)); `fetchcast ingest FILE` creates one, or pass --db with an existing store")
        }
    }
}

enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case table, json
}

/// `open(2)` for reading, outside ``StoreOptions`` (whose `open` methods hide it).
private func openForReading(_ path: String) -> Int32 {
    open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
}
