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

    func open(create: Bool) throws -> Store {
        do {
            return try Store(path: path, create: create)
        } catch {
            throw FetchCast.fail(error.description)
        }
    }
}

enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case table, json
}
