import FetchCastStore

/// A fresh directory for one test, holding its store and trace files; removed when released.
package final class TemporaryStore {
    private let folder: TemporaryDirectory
    /// The directory.
    package var directory: String { folder.path }
    /// Where the store lives (not created until ``open(create:)``).
    package var path: String { directory + "/test.sqlite" }

    /// Creates the directory (not the store).
    package init() throws {
        folder = try TemporaryDirectory(prefix: "fetchcast-store-tests")
    }

    /// Opens (creating by default) the store.
    package func open(create: Bool = true) throws -> Store {
        try Store(path: path, create: create)
    }

    /// Writes a trace file next to the store and returns its path.
    @discardableResult
    package func write(_ name: String, _ text: String) throws -> String {
        try folder.write(name, text)
    }

    /// Ingests CSV rows (the header is added) into `store` as a file of its own next to the
    /// store, at a fixed ingest time; returns the file's path.
    @discardableResult
    package func ingest(_ rows: [String], into store: Store) throws -> String {
        files += 1
        let path = try write("rows-\(files).csv", ([Self.header] + rows).joined(separator: "\n"))
        _ = try Ingestor(store: store, options: .init(now: { 1_700_000_000 })).ingest(path: path)
        return path
    }

    /// The header ``ingest(_:into:)`` adds.
    package static let header = "time,device,app,event,result,bytes,duration_ms"

    private var files = 0

    /// Writes bytes to a file next to the store and returns its path.
    @discardableResult
    package func write(_ name: String, bytes: [UInt8]) throws -> String {
        try folder.write(name, bytes: bytes)
    }
}
