/// A failure reported by SQLite, or a store that cannot be used.
public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The store's path.
    public var path: String
    /// What went wrong, as a sentence naming what to do.
    public var message: String
    /// SQLite's result code, when SQLite reported it.
    public var code: Int32?

    /// Creates an error.
    public init(path: String, message: String, code: Int32? = nil) {
        self.path = path
        self.message = message
        self.code = code
    }

    public var description: String { "\(path): \(message)" }
}

extension StoreError {
    /// Whether SQLite could not write: the disk or the store's page limit is full
    /// (`SQLITE_FULL`), the file or its directory is read-only (`SQLITE_READONLY`,
    /// `SQLITE_CANTOPEN`, `SQLITE_PERM`), or the write failed (`SQLITE_IOERR`). Reads may
    /// still work.
    public var isWriteFailure: Bool {
        guard let code else { return false }
        // SQLITE_PERM 3, SQLITE_READONLY 8, SQLITE_IOERR 10, SQLITE_FULL 13, SQLITE_CANTOPEN 14.
        return [3, 8, 10, 13, 14].contains(code & 0xff)
    }
}
