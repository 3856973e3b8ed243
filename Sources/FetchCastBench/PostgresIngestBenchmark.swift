import FetchCastStore
import FetchCastTrace

/// `fetchcast ingest --db postgres://…` against `psql \copy` of the same rows, side by side in
/// one run, on the same server.
///
/// Reference: `zcat trace | psql -c "\copy events FROM STDIN (FORMAT csv, HEADER)"` into a
/// plain 7-column text table (no parsing, no validation, no index) of a fresh database. Ours:
/// the `fetchcast ingest` binary into another fresh database, process start and schema creation
/// included. The ratio is reference time / ours: fetchcast's events/s relative to psql's.
///
/// Beside them, what the server alone needs for fetchcast's rows: `psql \copy` of the rows
/// fetchcast stored (dumped as COPY text, in the order an append sends them) into fetchcast's
/// own empty tables in a third database (the schema copied with `pg_dump --schema-only`). No
/// client can go faster than that into those tables; the gap to the reference is the cost of
/// the layout (the partitions and the two B-tree indexes every event row goes into).
package enum PostgresIngestBenchmark {
    /// One size's measurements.
    package struct Row: Sendable {
        package var rows: Int
        package var traceBytes: Int64
        package var psqlCopy: ChildRun
        package var fetchcast: ChildRun
        /// `psql \copy` of fetchcast's stored rows into fetchcast's empty tables.
        package var schemaFloor: ChildRun
        /// psql \copy time / fetchcast time (wall clock): above 1 means fetchcast is faster.
        package var ratio: Double { psqlCopy.seconds / max(fetchcast.seconds, 1e-9) }
        /// The schema floor's time / fetchcast's: how close fetchcast comes to what the server
        /// needs for its rows (1 would be no client cost at all).
        package var ratioToFloor: Double { schemaFloor.seconds / max(fetchcast.seconds, 1e-9) }
    }

    /// The ratio issue 28 asks for.
    package static let targetRatio = 0.7

    /// Runs the benchmark for each size; writes progress lines to `log`.
    /// - Parameters:
    ///   - url: A `postgres://` URL; its server gets two databases per run (created and
    ///     dropped here, through that URL's database); the password as for `fetchcast` (the URL,
    ///     `PGPASSWORD` or `~/.pgpass`, which psql reads too).
    package static func run<Log: TextOutputStream>(
        sizes: [Int], directory: String, executable: String, url: String, repeats: Int, log: inout Log
    ) throws -> [Row] {
        var rows: [Row] = []
        for size in sizes {
            let (trace, traceBytes) = try SyntheticTrace.generate(rows: size, in: directory, name: "bench-pg", log: &log)
            var best: Row?
            for r in 0..<repeats {
                let refDB = "fetchcast_bench_ref_\(size)_\(r)", ourDB = "fetchcast_bench_ours_\(size)_\(r)"
                let floorDB = "fetchcast_bench_floor_\(size)_\(r)"
                for db in [refDB, ourDB, floorDB] {
                    try admin(url, "DROP DATABASE IF EXISTS \(db)")
                    try admin(url, "CREATE DATABASE \(db)")
                }
                let schema = "CREATE TABLE events(time text, device text, app text, event text, result text, bytes text, duration_ms text)"
                guard ChildProcess.shell("psql -X -q -v ON_ERROR_STOP=1 \(quoted(replacingDatabase(of: url, with: refDB))) -c \(quoted(schema))").status == 0 else {
                    throw StoreError(path: url, message: "psql could not create the reference table")
                }
                let reference = ChildProcess.shell(
                    "zcat \(quoted(trace)) | psql -X -q -v ON_ERROR_STOP=1 \(quoted(replacingDatabase(of: url, with: refDB))) -c \(quoted("\\copy events FROM STDIN WITH (FORMAT csv, HEADER true)"))")
                let ours = ChildProcess.run([executable, "ingest", "--quiet", "--db", replacingDatabase(of: url, with: ourDB), trace])
                guard reference.status == 0 else { throw StoreError(path: url, message: "the psql \\copy reference failed (is psql installed?)") }
                guard ours.status == 0 else { throw StoreError(path: url, message: "fetchcast ingest failed in the benchmark") }
                let floor = try schemaFloor(from: replacingDatabase(of: url, with: ourDB), into: replacingDatabase(of: url, with: floorDB),
                                            rows: "\(directory)/bench-pg-rows.txt")
                let row = Row(rows: size, traceBytes: traceBytes, psqlCopy: reference, fetchcast: ours, schemaFloor: floor)
                log.write("  run \(r + 1): psql \\copy \(CSVField.fixed(reference.seconds, decimals: 3)) s, fetchcast \(CSVField.fixed(ours.seconds, decimals: 3)) s, psql \\copy of fetchcast's rows into its tables \(CSVField.fixed(floor.seconds, decimals: 3)) s\n")
                if best == nil || row.fetchcast.seconds + row.psqlCopy.seconds < best!.fetchcast.seconds + best!.psqlCopy.seconds { best = row }
                for db in [refDB, ourDB, floorDB] { try admin(url, "DROP DATABASE IF EXISTS \(db)") }
            }
            rows.append(best!)
            unlink(trace)
        }
        return rows
    }

    /// The columns of `event_log` an append streams.
    private static let eventColumns = "device_id, file_id, line, time_us, utc_offset_s, app_id, kind, result, bytes, duration_ms, network, power, battery, low_power"

    /// Times `psql \copy` of the events `ours` holds into an empty copy of its tables in `floor`:
    /// the rows in the order an append sends them (each batch of 16,384 parsed rows, the
    /// synthetic trace's lines 2 on, by device, then line), through the file `rows`, removed after.
    private static func schemaFloor(from ours: String, into floor: String, rows: String) throws -> ChildRun {
        defer { unlink(rows) }
        let dump = "\\copy (SELECT \(eventColumns) FROM event_log ORDER BY file_id, (line - 2) / 16384, device_id, line) TO \(quoted(rows))"
        guard ChildProcess.shell("psql -X -q -v ON_ERROR_STOP=1 \(quoted(ours)) -c \(quoted(dump))").status == 0,
              ChildProcess.shell("pg_dump --schema-only --no-owner \(quoted(ours)) | psql -X -q -v ON_ERROR_STOP=1 \(quoted(floor)) >/dev/null").status == 0
        else {
            throw StoreError(path: floor, message: "psql or pg_dump could not copy fetchcast's rows and tables for the schema floor (are both installed?)")
        }
        let run = ChildProcess.shell("psql -X -q -v ON_ERROR_STOP=1 \(quoted(floor)) -c \(quoted("\\copy event_log(\(eventColumns)) FROM \(quoted(rows))"))")
        guard run.status == 0 else { throw StoreError(path: floor, message: "psql \\copy into fetchcast's tables failed in the benchmark") }
        return run
    }

    /// Runs fixed SQL (database names this type made) through psql on the URL's database.
    static func admin(_ url: String, _ sql: String) throws {
        guard ChildProcess.shell("psql -X -q -v ON_ERROR_STOP=1 \(quoted(url)) -c \(quoted(sql)) >/dev/null").status == 0 else {
            throw StoreError(path: url, message: "psql could not run `\(sql)` (is psql installed, and may this user create databases?)")
        }
    }

    /// `url` naming another database.
    static func replacingDatabase(of url: String, with database: String) -> String {
        let query = url.firstIndex(of: "?") ?? url.endIndex
        let head = url[..<query]
        guard let scheme = head.range(of: "://"), let slash = head[scheme.upperBound...].firstIndex(of: "/") else { return url }
        return String(head[...slash]) + database + String(url[query...])
    }

    /// A word for the shell, single-quoted.
    private static func quoted(_ s: String) -> String {
        "'" + s.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
