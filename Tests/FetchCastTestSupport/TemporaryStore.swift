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

    /// Writes bytes to a file next to the store and returns its path.
    @discardableResult
    package func write(_ name: String, bytes: [UInt8]) throws -> String {
        try folder.write(name, bytes: bytes)
    }
}
