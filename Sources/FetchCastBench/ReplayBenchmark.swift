#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FetchCastStore
import FetchCastTrace

/// `fetchcast evaluate --policies interval` against `zcat` over the same gzip trace, side by side
/// in one run (process start included). The target: replay at ≥ 0.5× zcat's speed.
package enum ReplayBenchmark {
    /// One size's measurements.
    package struct Row: Sendable {
        package var rows: Int
        package var traceBytes: Int64
        package var zcat: ChildRun
        package var fetchcast: ChildRun
        /// zcat time / fetchcast time: fetchcast's speed as a fraction of zcat's (target ≥ 0.5).
        package var speedVsZcat: Double { zcat.seconds / max(fetchcast.seconds, 1e-9) }
    }

    /// Runs the benchmark for each size; writes progress lines to `log`.
    package static func run<Log: TextOutputStream>(
        sizes: [Int], directory: String, executable: String, repeats: Int, log: inout Log
    ) throws -> [Row] {
        var rows: [Row] = []
        for size in sizes {
            let out = "\(directory)/replay-\(size)-out"
            let (trace, traceBytes) = try SyntheticTrace.generate(rows: size, in: directory, name: "replay", log: &log)
            var best: Row?
            for r in 0..<repeats {
                let zcat = ChildProcess.shell("zcat '\(trace)' > /dev/null")
                let ours = ChildProcess.run([executable, "evaluate", trace, "--policies", "interval", "--quiet", "--out", out])
                guard zcat.status == 0 else { throw StoreError(path: trace, message: "zcat failed in the benchmark (is gzip installed?)") }
                guard ours.status == 0 else { throw StoreError(path: trace, message: "fetchcast evaluate failed in the benchmark") }
                let row = Row(rows: size, traceBytes: traceBytes, zcat: zcat, fetchcast: ours)
                log.write("  run \(r + 1): zcat \(CSVField.fixed(zcat.seconds, decimals: 3)) s, fetchcast evaluate \(CSVField.fixed(ours.seconds, decimals: 3)) s\n")
                if best == nil || row.fetchcast.seconds + row.zcat.seconds < best!.fetchcast.seconds + best!.zcat.seconds { best = row }
            }
            rows.append(best!)
            for name in ["summary.csv", "devices.csv", "run.json"] { unlink("\(out)/\(name)") }
            rmdir(out)
            unlink(trace)
        }
        return rows
    }
}
