#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a FetchCast store is, on either engine: the embedded SQLite file (``sqlite(path:)``)
/// or a PostgreSQL database (`StoreLocation.postgres(url:)`, in FetchCastPostgres).
///
/// What the library's engine-neutral entry points take: ``openEventLog(create:)`` to ingest
/// and list files, `ModelRepository(location:)` for models and plans (and
/// `Exporter.export(_:from:to:onSaveFailure:)` of the model's tables from it),
/// `Exporter.exportEvents(_:from:to:)` for events, `Evaluator.run(store:options:…)` to replay
/// the stored events, `ServeConfiguration(store:)` for the service and `Planner(location:)` for
/// plans asked from tasks. Naming a store opens
/// nothing; each entry point opens its own connection and closes it when done (a repository's
/// when it is released).
public struct StoreLocation: Sendable, CustomStringConvertible {
    /// How the connections of the model layer and of a service are opened.
    package var storage: ServiceStorage
    /// Opens the event log; `create` makes a missing store (an SQLite file, PostgreSQL's tables).
    package var openLog: @Sendable (_ create: Bool) async throws -> any EventLogWriter & EventLogScanner
    /// The SQLite file's path, `nil` on PostgreSQL: the file outputs must not replace.
    package var filePath: String?

    /// Creates a location from how its engine opens it.
    package init(
        storage: ServiceStorage, filePath: String?,
        openLog: @escaping @Sendable (_ create: Bool) async throws -> any EventLogWriter & EventLogScanner
    ) {
        self.storage = storage
        self.filePath = filePath
        self.openLog = openLog
    }

    /// The SQLite store at `path` (`fetchcast --db PATH`).
    public static func sqlite(path: String) -> StoreLocation {
        StoreLocation(storage: .sqlite(path: path), filePath: path) { create in
            if !create { try requireFile(path) }
            return try Store(path: path, create: create)
        }
    }

    /// Where the store is, as messages name it: the file's path, or the URL without its password.
    public var description: String { storage.location }

    /// Opens the event log: to append trace files (``EventLogWriter/append(path:name:options:)``,
    /// what `fetchcast ingest` does), forget one, list files and devices, read stats. Close it
    /// when done.
    /// - Parameter create: Whether a missing store is created (an SQLite file, FetchCast's tables
    ///   in an empty PostgreSQL database); without, a missing store is an error, not an empty one.
    /// - Throws: ``StoreError`` when the store cannot be opened.
    public func openEventLog(create: Bool = false) async throws -> any EventLogWriter {
        try await openLog(create)
    }

    /// Opens a connection for the model layer (an existing store; an older PostgreSQL schema is
    /// upgraded).
    /// - Throws: ``StoreError`` when the store does not exist (an SQLite store's missing file is
    ///   an error, as a PostgreSQL database without FetchCast's tables is, not an empty store).
    package func openModelStore() async throws -> any ModelStore {
        if let filePath { try Self.requireFile(filePath) }
        return try await storage.open(false)
    }

    /// A missing file is an error: a mistyped path must not read as an empty store.
    private static func requireFile(_ path: String) throws(StoreError) {
        guard access(path, F_OK) == 0 else {
            throw StoreError(path: path, message: "no such store; create it by ingesting a trace (StoreLocation.openEventLog(create: true), fetchcast ingest)")
        }
    }
}
