import ArgumentParser
import FetchCastBench
import FetchCastStore
import FetchCastTrace

#if canImport(Glibc)
import Glibc
#endif

extension FetchCast {
    struct Bench: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Measure fetchcast against reference tools in the same run, and print ratios.",
            discussion: """
                ingest: generates synthetic gzip CSV traces (seeded) and times, side by side, \
                `zcat trace | sqlite3 db .import` into a plain 7-column table against \
                `fetchcast ingest` of the same file (process start included). Prints the \
                speed-up (sqlite3 time / fetchcast time; above 1 is faster) and fetchcast's peak \
                memory per size, which should stay flat as the file grows.
                replay: generates a multi-million-row synthetic gzip trace and times `zcat trace > \
                /dev/null` against `fetchcast evaluate trace --policies interval` (budgets 12 and \
                24, all cores). Prints fetchcast's speed as a fraction of zcat's (target: at least \
                0.5) and its peak memory.
                """)

        @Argument(help: "What to measure: ingest or replay.")
        var target: String = "ingest"

        @Option(help: ArgumentHelp("Trace sizes in rows, comma-separated (default: 500000,2000000 for ingest, 3000000 for replay).", valueName: "n,n"))
        var rows: String?

        var sizeList: String { rows ?? (target == "replay" ? "3000000" : "500000,2000000") }

        @Option(help: "Runs per size; the fastest pair is reported.")
        var repeats: Int = 3

        @Option(help: ArgumentHelp("Scratch directory (default: a new one under /tmp).", valueName: "dir"))
        var workDir: String?

        func validate() throws {
            guard target == "ingest" || target == "replay" else {
                throw ValidationError("unknown benchmark '\(target)'; expected ingest or replay.")
            }
            guard sizeList.split(separator: ",").allSatisfy({ Int($0).map { $0 > 0 } ?? false }) else {
                throw ValidationError("--rows takes positive whole numbers separated by commas, e.g. 500000,2000000.")
            }
            guard repeats >= 1 else { throw ValidationError("--repeats must be at least 1.") }
        }

        func run() throws {
            var err = FileSink.standardError()
            var dir = workDir ?? ""
            if dir.isEmpty {
                var template = Array("/tmp/fetchcast-bench-XXXXXX".utf8CString)
                guard let made = mkdtemp(&template) else { throw FetchCast.fail("cannot create a scratch directory under /tmp") }
                dir = String(cString: made)
            } else {
                mkdir(dir, 0o755)
            }
            let sizes = sizeList.split(separator: ",").compactMap { Int($0) }
            if target == "replay" {
                try runReplay(sizes: sizes, directory: dir, log: &err)
                if workDir == nil { rmdir(dir) }
                return
            }
            let results: [IngestBenchmark.Row]
            do {
                results = try IngestBenchmark.run(
                    sizes: sizes, directory: dir, executable: ChildProcess.currentExecutablePath, repeats: repeats, log: &err)
            } catch {
                throw FetchCast.fail("\(error)")
            }
            if workDir == nil { rmdir(dir) }
            var out = FileSink.standardOutput()
            let table = [["rows", "gz_MiB", "zcat_s", "sqlite3_import_s", "fetchcast_s", "speedup_vs_sqlite3", "fetchcast_Mrows_s", "fetchcast_peak_MiB"]]
                + results.map { r in
                    [String(r.rows), CSVField.fixed(Double(r.traceBytes) / 1_048_576, decimals: 1),
                     CSVField.fixed(r.zcat.seconds, decimals: 3), CSVField.fixed(r.sqliteImport.seconds, decimals: 3),
                     CSVField.fixed(r.fetchcast.seconds, decimals: 3), CSVField.fixed(r.speedup, decimals: 2) + "x",
                     CSVField.fixed(Double(r.rows) / r.fetchcast.seconds / 1e6, decimals: 2),
                     CSVField.fixed(Double(r.fetchcast.maxRSSKiB) / 1024, decimals: 1)]
                }
            TextTable.write(table, rightAligned: Set(0..<8), to: &out)
            try FetchCast.finish(out)
        }

        private func runReplay(sizes: [Int], directory: String, log: inout FileSink) throws {
            let results: [ReplayBenchmark.Row]
            do {
                results = try ReplayBenchmark.run(
                    sizes: sizes, directory: directory, executable: ChildProcess.currentExecutablePath, repeats: repeats, log: &log)
            } catch {
                throw FetchCast.fail("\(error)")
            }
            var out = FileSink.standardOutput()
            let table = [["rows", "gz_MiB", "zcat_s", "fetchcast_evaluate_s", "speed_vs_zcat", "fetchcast_Mevents_s", "fetchcast_peak_MiB"]]
                + results.map { r in
                    [String(r.rows), CSVField.fixed(Double(r.traceBytes) / 1_048_576, decimals: 1),
                     CSVField.fixed(r.zcat.seconds, decimals: 3), CSVField.fixed(r.fetchcast.seconds, decimals: 3),
                     CSVField.fixed(r.speedVsZcat, decimals: 2) + "x",
                     CSVField.fixed(Double(r.rows) / r.fetchcast.seconds / 1e6, decimals: 2),
                     CSVField.fixed(Double(r.fetchcast.maxRSSKiB) / 1024, decimals: 1)]
                }
            TextTable.write(table, rightAligned: Set(0..<7), to: &out)
            try FetchCast.finish(out)
        }
    }
}
