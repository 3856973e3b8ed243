#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FetchCastStore
import FetchCastTrace

/// End-to-end ingest against the `sqlite3` shell, side by side in one run.
///
/// Reference: `zcat trace | sqlite3 db ".import"` into a plain 7-column table (text, no
/// parsing, no validation). Ours: the `fetchcast ingest` binary, process start included.
/// Both write to a fresh database in the same directory. The ratio is reference time / ours.
package enum IngestBenchmark {
    /// One size's measurements.
    package struct Row: Sendable {
        package var rows: Int
        package var traceBytes: Int64
        package var zcat: ChildRun
        package var sqliteImport: ChildRun
        package var fetchcast: ChildRun
        /// sqlite3 import time / fetchcast time (wall clock), which is fetchcast's events/s
        /// relative to the import's: above 1 means fetchcast is faster.
        package var speedup: Double { sqliteImport.seconds / max(fetchcast.seconds, 1e-9) }
    }

    /// The speedup issue 28 asks of a 2 M-row synthetic trace.
    package static let targetSpeedup = 2.0

    /// Runs the benchmark for each size; writes progress lines to `log`.
    package static func run<Log: TextOutputStream>(
        sizes: [Int], directory: String, executable: String, repeats: Int, log: inout Log
    ) throws -> [Row] {
        var rows: [Row] = []
        for size in sizes {
            let (trace, traceBytes) = try SyntheticTrace.generate(rows: size, in: directory, name: "bench", log: &log)
            var best: Row?
            for r in 0..<repeats {
                let refDB = "\(directory)/ref-\(size)-\(r).sqlite"
                let ourDB = "\(directory)/ours-\(size)-\(r).sqlite"
                unlink(refDB); unlink(ourDB)
                let zcat = ChildProcess.shell("zcat '\(trace)' > /dev/null")
                let schema = "CREATE TABLE events(time TEXT, device TEXT, app TEXT, event TEXT, result TEXT, bytes TEXT, duration_ms TEXT);"
                let reference = ChildProcess.shell(
                    "zcat '\(trace)' | sqlite3 '\(refDB)' '\(schema)' '.import --csv --skip 1 /dev/stdin events'")
                let ours = ChildProcess.run([executable, "ingest", "--quiet", "--db", ourDB, trace])
                guard reference.status == 0 else { throw StoreError(path: refDB, message: "the sqlite3 reference failed (is the sqlite3 shell installed?)") }
                guard ours.status == 0 else { throw StoreError(path: ourDB, message: "fetchcast ingest failed in the benchmark") }
                let row = Row(rows: size, traceBytes: traceBytes, zcat: zcat, sqliteImport: reference, fetchcast: ours)
                log.write("  run \(r + 1): zcat \(CSVField.fixed(zcat.seconds, decimals: 3)) s, sqlite3 import \(CSVField.fixed(reference.seconds, decimals: 3)) s, fetchcast \(CSVField.fixed(ours.seconds, decimals: 3)) s\n")
                if best == nil || row.fetchcast.seconds + row.sqliteImport.seconds < best!.fetchcast.seconds + best!.sqliteImport.seconds { best = row }
                unlink(refDB); unlink(ourDB)
                for suffix in ["-wal", "-shm"] { unlink(ourDB + suffix); unlink(refDB + suffix) }
            }
            rows.append(best!)
            unlink(trace)
        }
        return rows
    }
}
