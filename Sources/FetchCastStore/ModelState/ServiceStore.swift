#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a long-running service (`fetchcast serve`) asks of a store besides the model layer's
/// reads and state: appending a trace file, listing devices a page at a time, and its size.
///
/// One instance is one connection, used by one thread at a time. Whatever the engine, an append
/// is one transaction that either commits the whole file or leaves the store as it was.
package protocol ServiceStore: ModelStore {
    /// Appends one trace file as `fetchcast ingest` does, in one transaction durable at commit.
    /// - Throws: `TraceError` for bad input (nothing is stored), ``StoreError`` when the engine fails.
    func ingest(path: String, name: String, options: IngestOptions) async throws -> FileIngestResult

    /// Devices in name order (bytewise), after `after` when given, at most `limit` of them.
    func deviceSummaries(after: String?, limit: Int) async throws -> [DeviceListing]

    /// How many devices have an event after `micros` (Unix microseconds, UTC).
    func devicesWithEvents(after micros: Int64) async throws -> Int64

    /// Bytes the store takes (its files, or its database); 0 when unknown.
    var storeBytes: Int64 { get async }
}

/// How a service opens its connections to one store: one to write (ingest and fold), then one
/// per reader and one for the warm-up.
package struct ServiceStorage: Sendable {
    /// Where the store is, for messages (a path, or a URL without its password).
    package var location: String
    /// Opens a connection; `writer` for the one that ingests and folds.
    package var open: @Sendable (_ writer: Bool) async throws -> any ServiceStore
    /// About how many bytes of plans kept ahead a service keeps in memory, answering from them
    /// after one shared check of the store: for a store a round trip away (0: none, every plan
    /// reads the store).
    package var plansInMemoryBytes = 0
    /// The most reader connections open at once (a reader wanted beyond waits for one to be
    /// given back); `nil`: one per thread that reads at once.
    package var maxReaders: Int?

    /// Creates storage from an opener.
    package init(location: String, open: @escaping @Sendable (_ writer: Bool) async throws -> any ServiceStore) {
        self.location = location
        self.open = open
    }

    /// The SQLite file at `path`, created when missing; its writer syncs at each commit
    /// (`synchronous=FULL`), so a committed ingest survives power loss.
    package static func sqlite(path: String) -> ServiceStorage {
        ServiceStorage(location: path) { writer in
            guard writer else { return try Store(path: path, create: false) }
            let store = try Store(path: path, create: true)
            // NORMAL (the CLI's level) is durable against a crash of the process only; FULL also
            // syncs the WAL at each commit, so a 200 means the events survive power loss.
            try store.setDurability(.full)
            return store
        }
    }
}

extension Store: ServiceStore {
    package func ingest(path: String, name: String, options: IngestOptions) throws -> FileIngestResult {
        try Ingestor(store: self, options: options).ingest(path: path, name: name)
    }

    /// The database file and its write-ahead log.
    package var storeBytes: Int64 { Self.fileBytes(path) + Self.fileBytes(path + "-wal") }

    private static func fileBytes(_ path: String) -> Int64 {
        var st = stat()
        return stat(path, &st) == 0 ? Int64(st.st_size) : 0
    }
}
