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

    var path: String {
        if let db { return db }
        if let env = getenv("FETCHCAST_DB"), env.pointee != 0 { return String(cString: env) }
        return Store.defaultPath
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

    /// Opens the event log to read it, on either engine (SQLite as ``open(_:)`` does).
    func openLog(_ access: Store.Access) async throws -> any EventLogReader {
        guard isPostgres else { return try open(access) }
        return try await openPostgres(create: false)
    }

    /// Opens the event log to read its events (`export events`, `evaluate` without a trace), on
    /// either engine (SQLite as ``open(_:)`` does).
    func openScanner(_ access: Store.Access) async throws -> any EventLogScanner {
        guard isPostgres else { return try open(access) }
        return try await openPostgres(create: false)
    }

    /// Opens the store for the model layer (`model`, `predict`, `export model|cousage|predictions`)
    /// on either engine, runs `body` with it and closes it: SQLite as ``open(_:)`` does; a
    /// PostgreSQL database with an older FetchCast schema is upgraded (it keeps model state).
    func withModelStore<T>(_ access: Store.Access, _ body: (any ModelStore) throws -> T) throws -> T {
        guard isPostgres else { return try body(try open(access)) }
        let store: PostgresModelStore
        do {
            store = try PostgresModelStore.open(try PostgresLocation(url: path))
        } catch let error as StoreError {
            throw FetchCast.fail(error.description)
        }
        defer { store.close() }
        return try body(store)
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
        do {
            return try Store(path: path, access: access)
        } catch {
            throw FetchCast.fail(error.description)
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
