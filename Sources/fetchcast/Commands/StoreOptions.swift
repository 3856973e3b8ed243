import ArgumentParser
import FetchCastStore

#if canImport(Glibc)
import Glibc
#endif

/// `--db`, shared by every subcommand that uses a store.
struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The store file (default: $FETCHCAST_DB, else ./fetchcast.sqlite).", valueName: "path"))
    var db: String?

    var path: String {
        if let db { return db }
        if let env = getenv("FETCHCAST_DB"), env.pointee != 0 { return String(cString: env) }
        return Store.defaultPath
    }

    /// Opens the store to write it: `ingest` creates it (`create`); other writers need it to
    /// exist.
    func open(create: Bool) throws -> Store {
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

    /// Opens an existing store for a command that reads it: read-only when it only reads or
    /// when the store cannot be written (``Store/Access``).
    func open(_ access: Store.Access) throws -> Store {
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
