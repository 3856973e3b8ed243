/// A failure reported by SQLite, or a store that cannot be used.
public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The store's path.
    public var path: String
    /// What went wrong, as a sentence naming what to do.
    public var message: String
    /// SQLite's result code, when SQLite reported it.
    public var code: Int32?
    /// Whether the store's server is away (it cannot be reached, or it dropped the connection):
    /// nothing is wrong with the request, and the same one may succeed once it is back.
    public var isUnavailable: Bool

    /// Creates an error.
    public init(path: String, message: String, code: Int32? = nil, isUnavailable: Bool = false) {
        self.path = path
        self.message = message
        self.code = code
        self.isUnavailable = isUnavailable
    }

    public var description: String { "\(path): \(message)" }
}

/// The SQLite primary result codes the store acts on (sqlite.org/rescode.html). An extended
/// code (`sqlite3_extended_result_codes` is on) carries its primary code in its low byte.
enum SQLiteResult: Int32 {
    case permissionDenied = 3  // SQLITE_PERM
    case busy = 5  // SQLITE_BUSY: another connection holds a lock
    case locked = 6  // SQLITE_LOCKED
    case readOnly = 8  // SQLITE_READONLY
    case ioError = 10  // SQLITE_IOERR
    case corrupt = 11  // SQLITE_CORRUPT: a damaged database file
    case full = 13  // SQLITE_FULL: the disk or the page limit
    case cannotOpen = 14  // SQLITE_CANTOPEN
    case notADatabase = 26  // SQLITE_NOTADB

    /// The primary code of a (possibly extended) result code, when it is one of these.
    init?(code: Int32) { self.init(rawValue: code & 0xff) }
}

extension StoreError {
    /// SQLite's primary result code, when SQLite reported one of those the store acts on.
    var result: SQLiteResult? { code.flatMap(SQLiteResult.init(code:)) }

    /// Whether the disk (or the store's page limit) is full (`SQLITE_FULL`).
    package var isFull: Bool { result == .full }

    /// Whether SQLite could not write: the disk or the store's page limit is full
    /// (`SQLITE_FULL`), the file or its directory is read-only (`SQLITE_READONLY`,
    /// `SQLITE_CANTOPEN`, `SQLITE_PERM`), or the write failed (`SQLITE_IOERR`). Reads may
    /// still work.
    package var isWriteFailure: Bool {
        switch result {
        case .permissionDenied, .readOnly, .ioError, .full, .cannotOpen: true
        case .busy, .locked, .corrupt, .notADatabase, nil: false
        }
    }

    /// Whether SQLite refused a write because the store was opened read-only
    /// (`SQLITE_READONLY`: ``Store/Access``, a file or folder without write permission).
    package var isReadOnly: Bool { result == .readOnly }

    /// A value read back from the store that this build does not know (a newer or damaged
    /// store): names the table, the row and the value.
    static func unknownValue(path: String, table: String, row: Int64, column: String, value: Int64) -> StoreError {
        StoreError(
            path: path,
            message: "\(table) row \(row) has \(column) \(value), which this fetchcast does not know (a newer fetchcast wrote it, or the store is damaged; upgrade fetchcast or re-ingest into a new store)")
    }
}
