import CSQLite

/// One SQLite connection through the C API: the smallest wrapper that keeps the hot path free of
/// allocation (statements are prepared once and bound with `sqlite3_bind_*`).
final class Connection {
    /// The database file.
    let path: String
    let handle: OpaquePointer

    /// Opens (and, when `create` is true, creates) a database file.
    /// - Parameters:
    ///   - immutable: With `readOnly`, opens it as `immutable=1`: no locks, no `-shm` file
    ///     (for a file in a read-only folder, which nothing can change meanwhile).
    /// - Throws: ``StoreError`` when SQLite cannot open it.
    init(path: String, create: Bool, readOnly: Bool = false, immutable: Bool = false) throws(StoreError) {
        self.path = path
        var db: OpaquePointer?
        var flags = SQLITE_OPEN_NOMUTEX
        flags |= readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE
        if create && !readOnly { flags |= SQLITE_OPEN_CREATE }
        var name = path
        if readOnly && immutable {
            flags |= SQLITE_OPEN_URI
            name = "file:" + Self.uriEscaped(path) + "?immutable=1"
        }
        let rc = sqlite3_open_v2(name, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let db { sqlite3_close_v2(db) }
            throw StoreError(path: path, message: "cannot open the store: \(message) (check the path, or pass --db)", code: rc)
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
    }

    /// A path as the path of a `file:` URI: `%`, `?` and `#` escaped.
    static func uriEscaped(_ path: String) -> String {
        var out = ""
        for c in path {
            switch c {
            case "%": out += "%25"
            case "?": out += "%3f"
            case "#": out += "%23"
            default: out.append(c)
            }
        }
        return out
    }

    deinit {
        for stmt in cachedStatements.values { sqlite3_finalize(stmt) }
        sqlite3_close_v2(handle)
    }

    /// How long a statement waits for another process's lock before failing.
    func setBusyTimeout(milliseconds: Int32) {
        sqlite3_busy_timeout(handle, milliseconds)
    }

    func error(_ rc: Int32, _ what: String) -> StoreError {
        let message = String(cString: sqlite3_errmsg(handle))
        return StoreError(path: path, message: "\(what): \(message)", code: rc)
    }

    /// Runs one or more statements that return no rows.
    func execute(_ sql: String) throws(StoreError) {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if rc != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(errorMessage)
            throw StoreError(path: path, message: "SQL failed: \(message) [\(sql.prefix(80))]", code: rc)
        }
    }

    /// Statement handles kept prepared for repeated small queries, by SQL text; finalized with
    /// the connection (handles, not ``Statement``s, so that the cache keeps no cycle).
    private var cachedStatements: [String: OpaquePointer] = [:]

    /// A statement prepared once per connection and reused: for queries a process repeats
    /// (`predict` from an embedding server). Reset it after use, so that it holds no read lock.
    func cached(_ sql: String) throws(StoreError) -> Statement {
        if let handle = cachedStatements[sql] { return Statement(connection: self, handle: handle, finalizes: false) }
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw error(rc, "cannot prepare [\(sql.prefix(80))]") }
        cachedStatements[sql] = stmt
        return Statement(connection: self, handle: stmt, finalizes: false)
    }

    /// Prepares a statement.
    func prepare(_ sql: String) throws(StoreError) -> Statement {
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw error(rc, "cannot prepare [\(sql.prefix(80))]") }
        return Statement(connection: self, handle: stmt)
    }

    /// The first column of the first row of a query, as an integer (0 when there is no row).
    func scalarInt(_ sql: String, _ arguments: [SQLValue] = []) throws(StoreError) -> Int64 {
        let s = try prepare(sql)
        try s.bind(arguments)
        return try s.step() ? s.int(0) : 0
    }

    /// The rowid of the last insert.
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Rows changed by the last statement.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// Whether a transaction is open.
    var inTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }
}

/// A value bound to a statement parameter.
enum SQLValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// A prepared statement.
final class Statement {
    let connection: Connection
    let handle: OpaquePointer
    /// False for a statement the connection caches (it finalizes those itself).
    let finalizes: Bool

    init(connection: Connection, handle: OpaquePointer, finalizes: Bool = true) {
        self.connection = connection
        self.handle = handle
        self.finalizes = finalizes
    }

    deinit {
        if finalizes { sqlite3_finalize(handle) }
    }

    /// Binds values to parameters 1…n.
    func bind(_ values: [SQLValue]) throws(StoreError) {
        sqlite3_reset(handle)
        for (i, v) in values.enumerated() {
            let index = Int32(i + 1)
            switch v {
            case .null: sqlite3_bind_null(handle, index)
            case .integer(let x): sqlite3_bind_int64(handle, index, x)
            case .real(let x): sqlite3_bind_double(handle, index, x)
            case .text(let s): bindText(index, s)
            case .blob(let b):
                b.withUnsafeBytes { raw in
                    _ = sqlite3_bind_blob64(handle, index, raw.baseAddress, sqlite3_uint64(raw.count), fetchcast_sqlite_transient())
                }
            }
        }
    }

    @inline(__always)
    func bindInt(_ index: Int32, _ value: Int64) { sqlite3_bind_int64(handle, index, value) }
    @inline(__always)
    func bindInt(_ index: Int32, _ value: Int64?) {
        if let value { sqlite3_bind_int64(handle, index, value) } else { sqlite3_bind_null(handle, index) }
    }
    /// Binds text with its exact UTF-8 byte length, never as a C string: an id holding a NUL
    /// must not be cut short there (two ids would become one).
    func bindText(_ index: Int32, _ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            // A non-null pointer even for "", which SQLite would otherwise bind as NULL.
            let empty: StaticString = ""
            let bytes = UnsafeRawPointer(utf8.baseAddress ?? empty.utf8Start)
            _ = sqlite3_bind_text64(handle, index, bytes.assumingMemoryBound(to: CChar.self), sqlite3_uint64(utf8.count),
                                    fetchcast_sqlite_transient(), UInt8(SQLITE_UTF8))
        }
    }

    /// Steps once: `true` when a row is available, `false` when done.
    @discardableResult @inline(__always)
    func step() throws(StoreError) -> Bool {
        let rc = sqlite3_step(handle)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        let e = connection.error(rc, "statement failed")
        sqlite3_reset(handle)
        throw e
    }

    /// Runs an insert/update statement to completion and resets it for reuse.
    @inline(__always)
    func run() throws(StoreError) {
        let rc = sqlite3_step(handle)
        sqlite3_reset(handle)
        if rc != SQLITE_DONE && rc != SQLITE_ROW { throw connection.error(rc, "statement failed") }
    }

    /// Resets for reuse, keeping bindings.
    func reset() { sqlite3_reset(handle) }

    @inline(__always) func int(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    @inline(__always) func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }
    @inline(__always) func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }
    @inline(__always) func optionalInt(_ column: Int32) -> Int64? { isNull(column) ? nil : int(column) }
    /// A text column read with its byte length (a NUL inside the text does not end it).
    func text(_ column: Int32) -> String {
        guard let p = sqlite3_column_text(handle, column) else { return "" }
        let n = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeRawBufferPointer(start: p, count: n), as: UTF8.self)
    }
    func optionalText(_ column: Int32) -> String? { isNull(column) ? nil : text(column) }
    /// Reads a blob column in place (the bytes are SQLite's, valid only inside `body`).
    func withBlob<T>(_ column: Int32, _ body: (UnsafeRawBufferPointer) -> T) -> T {
        let n = Int(sqlite3_column_bytes(handle, column))
        guard n > 0, let p = sqlite3_column_blob(handle, column) else { return body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return body(UnsafeRawBufferPointer(start: p, count: n))
    }
    func blob(_ column: Int32) -> [UInt8] {
        let n = Int(sqlite3_column_bytes(handle, column))
        guard n > 0, let p = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: p, count: n))
    }
}
