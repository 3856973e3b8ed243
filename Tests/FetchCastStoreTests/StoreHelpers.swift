@testable import FetchCastStore
import FetchCastTestSupport
import FetchCastTrace

/// A fixed clock: 2013-11-09T22:36:45Z.
let fixedNow: @Sendable () -> Double = { 1_384_036_605 }

extension Store {
    /// Ingests one file with a fixed clock.
    @discardableResult
    func ingest(_ path: String, skipInvalid: Bool = false, onReject: ((TraceError, String) -> Void)? = nil) throws -> FileIngestResult {
        try Ingestor(store: self, options: .init(skipInvalid: skipInvalid, onReject: onReject, now: fixedNow)).ingest(path: path)
    }

    /// Every row of every table, each as `quote(col)|quote(col)…`, and the schema (tables,
    /// indexes, views as SQLite keeps them), for before/after comparisons.
    func dump() throws -> [String: [String]] {
        var out: [String: [String]] = [:]
        out["(schema)"] = try rows("SELECT type || '|' || name || '|' || coalesce(sql, '') FROM sqlite_master ORDER BY type, name")
        let tables = try rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        for table in tables {
            let columns = try rows("SELECT name FROM pragma_table_info('\(table)') ORDER BY cid")
            let expression = columns.map { "quote(\($0))" }.joined(separator: " || '|' || ")
            out[table] = try rows("SELECT \(expression) FROM \(table) ORDER BY rowid")
        }
        return out
    }

    /// The first column of every row of a query, as text.
    func rows(_ sql: String) throws -> [String] {
        let statement = try connection.prepare(sql)
        var out: [String] = []
        while try statement.step() { out.append(statement.text(0)) }
        return out
    }

    /// Rows of the `events` view, oldest first, as `time_utc|offset|device|app|event|result|bytes|duration_ms`.
    func eventRows() throws -> [String] {
        try rows("""
            SELECT time_utc || '|' || utc_offset_s || '|' || quote(device) || '|' || app || '|' || event || '|'
                || quote(result) || '|' || quote(bytes) || '|' || quote(duration_ms)
            FROM events ORDER BY time_us, file_id, line
            """)
    }
}

/// The canonical header line.
let header = "time,device,app,event,result,bytes,duration_ms\n"
