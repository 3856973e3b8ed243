import ArgumentParser
import FetchCastBench
import FetchCastPostgres
import FetchCastStore
import FetchCastTrace
import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension FetchCast {
    struct Bench: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "bench",
            abstract: "Measure fetchcast against reference tools in the same run, and print ratios.",
            discussion: """
                ingest: generates synthetic gzip CSV traces (seeded) and times, side by side, \
                `zcat trace | sqlite3 db .import` into a plain 7-column table against \
                `fetchcast ingest` of the same file (process start included). Prints the \
                speed-up (sqlite3 time / fetchcast time, wall clock: fetchcast's events/s relative \
                to the import's; above 1 is faster; the target is 2x), the CPU seconds of both and \
                fetchcast's peak memory per size, which should stay flat as the file grows.
                replay: generates a multi-million-row synthetic gzip trace and times `zcat trace > \
                /dev/null` against `fetchcast evaluate trace --policies interval` (budgets 12 and \
                24, all cores). Prints fetchcast's speed as a fraction of zcat's (target: at least \
                0.5) and its peak memory.
                predict: ingests --trace into a fresh store and times whole `fetchcast predict \
                --device D` calls (process start included) against a `sqlite3` shell query on the \
                same store, plus the in-process query (load the device's state from the store, \
                decode, plan) p50/p99 (targets: a CLI call at most 50 ms, the in-process query \
                p99 at most 1 ms; the *_of_* columns are the measurement over its target, at \
                most 1.00x meets it).
                model: the model's per-event update cost after 1 M and after 10 M events of one \
                device (flat means O(1) in history), then over bursts of 10 k, 100 k and 1 M \
                launches within one minute (flat means O(1) whatever the spacing).
                serve: on a store holding --trace plus a synthetic fleet (--devices devices, --rows \
                rows), the in-process rate of first plans (every core; without saved schedulers, \
                then after the warm-up `serve` runs, which saves every device's; then from as many \
                tasks as clients through the route's entry) against GET \
                /v1/devices/{d}/plan from --clients keep-alive clients to a `fetchcast serve` child \
                (target: at least 0.5x, p99 at most 10 ms), the first 200 devices again (warm) and \
                while rows are posted (live), a /v1/plans sweep of every device and the server's peak \
                RSS, then POST /v1/events of a 500,000-row gzip trace against `fetchcast ingest` of \
                the same file (target: at least 0.7x).
                ingest --db postgres://USER@HOST:PORT/DB: the same synthetic traces, `fetchcast \
                ingest` into a fresh PostgreSQL database against `zcat trace | psql -c '\\copy \
                events FROM STDIN (FORMAT csv)'` into a plain 7-column text table of another (no \
                index, no partitions; target: at least 0.7x psql's events/s), and the schema floor: \
                psql \\copy of the rows fetchcast stored into an empty copy of its tables (what the \
                server alone needs for them; needs pg_dump); the URL's database is where the three \
                are created and dropped.
                restart --db postgres://USER@HOST:PORT/DB --restart-command CMD: a PostgreSQL \
                restart under load, as an operator's drill: a `fetchcast serve` child on a new \
                database of that server, --clients clients asking for plans and one posting small \
                bodies of new devices one after another, while CMD restarts the server (it must \
                return once the server is back, e.g. `pg_ctl restart -w`). Then reads the database \
                back with psql. Passes (exit 0) when no POST answered 200 lost a row, every answer \
                was 200 or 503 with Retry-After, the server kept running, and a plan answered 200 \
                within 10 s of CMD's end.
                sha256: hashes 256 MiB (fed in 256 KiB chunks, as a trace is read) with the \
                content hash FetchCast uses (swift-crypto) and with the hand-written Swift SHA-256 \
                it replaced, in the same run. Prints the speed-up (hand-written time / \
                swift-crypto time; above 1 is faster).
                seam: reads a device's model state by key from an SQLite store 200,000 times: \
                directly; through the asynchronous storage seam the model layer calls, awaited in \
                a task on the server's read thread; and through an actor on an executor of its \
                own, one hop a read and 100 reads a hop. Prints microseconds a read and each \
                against the direct read of the same run.
                """)

        @Argument(help: "What to measure: ingest, replay, predict, model, serve, restart, sha256 or seam.")
        var target: String = "ingest"

        @Option(help: ArgumentHelp("Trace sizes in rows, comma-separated (default: 500000,2000000 for ingest, 3000000 for replay).", valueName: "n,n"))
        var rows: String?

        var sizeList: String { rows ?? (target == "replay" ? "3000000" : target == "serve" ? "1000000" : "500000,2000000") }

        @Option(parsing: .unconditional, help: "Runs per size; the fastest pair is reported.")
        var repeats: Int = 3

        @Option(help: ArgumentHelp("Scratch directory, kept after the run (default: a new one under $TMPDIR, else /tmp, removed after the run unless --keep).", valueName: "dir"))
        var workDir: String?

        @Flag(help: "Keep the scratch directory made without --work-dir (traces and stores; `bench serve` leaves about 2 GB) for inspection.")
        var keep = false

        @Option(help: ArgumentHelp("The trace for `bench predict` and `bench serve` (default: the bundled Data/ubiqlog-sample.csv.gz; the published figures use the 14 users' whole development trace).", valueName: "file"))
        var trace: String?

        @Option(help: ArgumentHelp("A postgres:// URL whose user may create databases: `bench ingest` measures fetchcast ingest into PostgreSQL against psql \\copy instead of SQLite against sqlite3; `bench serve` measures the same fleet on SQLite, then on PostgreSQL with one and two serve processes.", valueName: "url"))
        var db: String?

        @Option(parsing: .unconditional, help: "CLI calls timed by `bench predict`.")
        var calls: Int = 30

        @Option(parsing: .unconditional, help: "Devices of the synthetic fleet of `bench serve`.")
        var devices: Int = 10_000

        @Option(parsing: .unconditional, help: "Concurrent keep-alive HTTP clients of `bench serve`.")
        var clients: Int = 32

        @Option(parsing: .unconditional, help: "Rows of the trace `bench serve` posts and ingests.")
        var postRows: Int = 500_000

        @Option(help: ArgumentHelp("The shell command `bench restart` runs to restart the PostgreSQL server of --db; it must return once the server accepts connections again.", valueName: "command"))
        var restartCommand: String?

        func validate() throws {
            guard ["ingest", "replay", "predict", "model", "serve", "restart", "sha256", "seam"].contains(target) else {
                throw ValidationError("unknown benchmark '\(target)'; expected ingest, replay, predict, model, serve, restart, sha256 or seam.")
            }
            if target == "restart", db == nil || restartCommand == nil {
                throw ValidationError("bench restart needs --db postgres://… (a user that may create databases) and --restart-command CMD.")
            }
            guard sizeList.split(separator: ",").allSatisfy({ Int($0).map { $0 > 0 } ?? false }) else {
                throw ValidationError("--rows takes positive whole numbers separated by commas, e.g. 500000,2000000.")
            }
            guard repeats >= 1 else { throw ValidationError("--repeats must be at least 1.") }
        }

        /// The trace `bench predict` and `bench serve` read.
        var tracePath: String { trace ?? "Data/ubiqlog-sample.csv.gz" }

        func run() async throws {
            var err = FileSink.standardError()
            if target == "predict", access(tracePath, R_OK) != 0 {
                let hint = trace == nil ? " (the default, relative to a FetchCast clone)" : ""
                throw FetchCast.fail("\(tracePath): cannot read the trace for `bench predict`\(hint); pass --trace FILE")
            }
            var dir = workDir ?? ""
            if dir.isEmpty {
                let base = TemporaryPath.directory
                do {
                    dir = try TemporaryPath.makeDirectory(in: base, prefix: "fetchcast-bench-")
                } catch {
                    throw FetchCast.fail("cannot create a scratch directory under \(base): \(error.reason) (set TMPDIR or pass --work-dir)")
                }
            } else {
                mkdir(dir, 0o755)
            }
            // A scratch directory of its own goes when the run ends, whatever the outcome.
            let scratch = dir
            defer {
                if workDir == nil && !keep { try? FileManager.default.removeItem(atPath: scratch) }
            }
            let sizes = sizeList.split(separator: ",").compactMap { Int($0) }
            if target == "predict" {
                try await runPredict(directory: dir, log: &err)
                return
            }
            if target == "serve" {
                try await runServe(rows: sizes.first ?? 1_000_000, directory: dir, log: &err)
                return
            }
            if target == "restart", let db, let restartCommand {
                try runRestart(db: db, command: restartCommand, directory: dir, log: &err)
                return
            }
            if target == "sha256" {
                let r: SHA256Benchmark.Result
                do { r = try SHA256Benchmark.run(megabytes: 256, repeats: repeats) } catch { throw FetchCast.fail("\(error)") }
                var out = FileSink.standardOutput()
                let mib = Double(r.bytes) / 1_048_576
                let table = [["MiB", "swift_crypto_s", "swift_crypto_MiB_s", "hand_written_s", "hand_written_MiB_s", "speedup_vs_hand_written"],
                             [CSVField.fixed(mib, decimals: 0), CSVField.fixed(r.swiftCrypto, decimals: 3), CSVField.fixed(mib / r.swiftCrypto, decimals: 0),
                              CSVField.fixed(r.handWritten, decimals: 3), CSVField.fixed(mib / r.handWritten, decimals: 0),
                              CSVField.fixed(r.speedup, decimals: 2) + "x"]]
                TextTable.write(table, rightAligned: Set(0..<6), to: &out)
                try FetchCast.finish(out)
                return
            }
            if target == "seam" {
                let r: SeamBenchmark.Result
                do { r = try await SeamBenchmark.run(directory: dir, repeats: repeats) } catch { throw FetchCast.fail("\(error)") }
                var out = FileSink.standardOutput()
                let us = { (x: Double) in CSVField.fixed(x, decimals: 2) }
                let ratio = { (x: Double) in CSVField.fixed(x / max(r.direct, 1e-9), decimals: 1) + "x" }
                let table = [["reads", "direct_us", "seam_us", "seam_vs_direct", "hop_each_us", "hop_each_vs_direct", "batch", "batched_us", "batched_vs_direct"],
                             [String(r.reads), us(r.direct), us(r.seam), ratio(r.seam), us(r.hopEach), ratio(r.hopEach), String(r.batch), us(r.batched),
                              ratio(r.batched)]]
                TextTable.write(table, rightAligned: Set(0..<9), to: &out)
                try FetchCast.finish(out)
                return
            }
            if target == "model" {
                let results = ModelUpdateBenchmark.run(checkpoints: [1_000_000, 10_000_000], log: &err)
                var out = FileSink.standardOutput()
                let table = [["events", "ns_per_event"]] + results.map { [String($0.events), CSVField.fixed($0.nanosPerEvent, decimals: 0)] }
                TextTable.write(table, rightAligned: [0, 1], to: &out)
                if results.count == 2 {
                    out.write("cost at 10M / cost at 1M: \(CSVField.fixed(results[1].nanosPerEvent / results[0].nanosPerEvent, decimals: 2))x\n")
                }
                // A burst: every launch within τ of the others (the `recent` list at its longest).
                let bursts = [10_000, 100_000, 1_000_000].map { n in (n, ModelUpdateBenchmark.burst(launches: n)) }
                out.write("\n")
                TextTable.write([["burst_launches_in_1_min", "ns_per_event"]] + bursts.map { [String($0.0), CSVField.fixed($0.1, decimals: 0)] },
                                rightAligned: [0, 1], to: &out)
                out.write("cost at 1M / cost at 10k: \(CSVField.fixed(bursts[2].1 / bursts[0].1, decimals: 2))x\n")
                try FetchCast.finish(out)
                return
            }
            if target == "replay" {
                try runReplay(sizes: sizes, directory: dir, log: &err)
                return
            }
            if let db, PostgresLocation.isURL(db) {
                try runPostgresIngest(sizes: sizes, directory: dir, url: db, log: &err)
                return
            }
            let results: [IngestBenchmark.Row]
            do {
                results = try IngestBenchmark.run(
                    sizes: sizes, directory: dir, executable: ChildProcess.currentExecutablePath, repeats: repeats, log: &err)
            } catch {
                throw FetchCast.fail("\(error)")
            }
            var out = FileSink.standardOutput()
            let table = [["rows", "gz_MiB", "zcat_s", "sqlite3_import_s", "sqlite3_import_cpu_s", "fetchcast_s", "fetchcast_cpu_s",
                          "speedup_vs_sqlite3", "fetchcast_Mrows_s", "fetchcast_peak_MiB"]]
                + results.map { r in
                    [String(r.rows), CSVField.fixed(Double(r.traceBytes) / 1_048_576, decimals: 1),
                     CSVField.fixed(r.zcat.seconds, decimals: 3), CSVField.fixed(r.sqliteImport.seconds, decimals: 3),
                     CSVField.fixed(r.sqliteImport.cpuSeconds, decimals: 3),
                     CSVField.fixed(r.fetchcast.seconds, decimals: 3), CSVField.fixed(r.fetchcast.cpuSeconds, decimals: 3),
                     CSVField.fixed(r.speedup, decimals: 2) + "x",
                     CSVField.fixed(Double(r.rows) / r.fetchcast.seconds / 1e6, decimals: 2),
                     CSVField.fixed(Double(r.fetchcast.maxRSSKiB) / 1024, decimals: 1)]
                }
            TextTable.write(table, rightAligned: Set(0..<10), to: &out)
            for r in results {
                let verdict = r.speedup >= IngestBenchmark.targetSpeedup ? "meets" : "MISSES"
                err.write("\(r.rows) rows: fetchcast ingest \(CSVField.fixed(r.speedup, decimals: 2))x the events/s of sqlite3 .import (speedup_vs_sqlite3; target \(CSVField.fixed(IngestBenchmark.targetSpeedup, decimals: 0))x: \(verdict) it)\n")
            }
            try FetchCast.finish(out)
        }

        private func runPostgresIngest(sizes: [Int], directory: String, url: String, log: inout FileSink) throws {
            let results: [PostgresIngestBenchmark.Row]
            do {
                results = try PostgresIngestBenchmark.run(
                    sizes: sizes, directory: directory, executable: ChildProcess.currentExecutablePath, url: url, repeats: repeats, log: &log)
            } catch {
                throw FetchCast.fail("\(error)")
            }
            var out = FileSink.standardOutput()
            let table = [["rows", "gz_MiB", "psql_copy_s", "psql_copy_cpu_s", "fetchcast_s", "fetchcast_cpu_s", "ratio_vs_psql_copy",
                          "schema_floor_s", "ratio_vs_floor", "fetchcast_Mrows_s", "fetchcast_peak_MiB"]]
                + results.map { r in
                    [String(r.rows), CSVField.fixed(Double(r.traceBytes) / 1_048_576, decimals: 1),
                     CSVField.fixed(r.psqlCopy.seconds, decimals: 3), CSVField.fixed(r.psqlCopy.cpuSeconds, decimals: 3),
                     CSVField.fixed(r.fetchcast.seconds, decimals: 3), CSVField.fixed(r.fetchcast.cpuSeconds, decimals: 3),
                     CSVField.fixed(r.ratio, decimals: 2) + "x", CSVField.fixed(r.schemaFloor.seconds, decimals: 3),
                     CSVField.fixed(r.ratioToFloor, decimals: 2) + "x", CSVField.fixed(Double(r.rows) / r.fetchcast.seconds / 1e6, decimals: 2),
                     CSVField.fixed(Double(r.fetchcast.maxRSSKiB) / 1024, decimals: 1)]
                }
            TextTable.write(table, rightAligned: Set(0..<11), to: &out)
            for r in results {
                let verdict = r.ratio >= PostgresIngestBenchmark.targetRatio ? "meets" : "MISSES"
                log.write("\(r.rows) rows: fetchcast ingest into PostgreSQL \(CSVField.fixed(r.ratio, decimals: 2))x the events/s of psql \\copy (target 0.7x: \(verdict) it)\n")
            }
            try FetchCast.finish(out)
        }

        private func runPredict(directory: String, log: inout FileSink) async throws {
            let r: PredictBenchmark.Result
            do {
                r = try await PredictBenchmark.run(trace: tracePath, directory: directory, executable: ChildProcess.currentExecutablePath, calls: calls, log: &log)
            } catch {
                throw FetchCast.fail("\(error)")
            }
            var out = FileSink.standardOutput()
            let ms = { (s: Double) in CSVField.fixed(s * 1000, decimals: 2) }
            let ratio = { (x: Double) in CSVField.fixed(x, decimals: 2) + "x" }
            let table = [["events", "device", "cli_median_ms", "cli_p95_ms", "cli_p95_of_50ms", "sqlite3_median_ms", "cli_vs_sqlite3",
                          "query_p50_ms", "query_p99_ms", "query_p99_of_1ms", "plan_p99_ms"],
                         [String(r.events), r.device, ms(r.cliMedian), ms(r.cliP95), ratio(r.cliP95OfTarget), ms(r.sqliteMedian),
                          ratio(r.cliMedian / max(r.sqliteMedian, 1e-9)), ms(r.queryP50), ms(r.queryP99), ratio(r.queryP99OfTarget),
                          ms(r.planP99)]]
            TextTable.write(table, rightAligned: Set(0..<11).subtracting([1]), to: &out)
            let verdict = { (x: Double) in x <= 1 ? "meets" : "MISSES" }
            log.write("load + decode + plan p99 \(ms(r.queryP99)) ms over \(r.querySamples) queries: \(ratio(r.queryP99OfTarget)) of the 1 ms target (\(verdict(r.queryP99OfTarget)) it); ")
            log.write("CLI call p95 \(ms(r.cliP95)) ms: \(ratio(r.cliP95OfTarget)) of the 50 ms target (\(verdict(r.cliP95OfTarget)) it)\n")
            try FetchCast.finish(out)
        }

        private func runServe(rows: Int, directory: String, log: inout FileSink) async throws {
            var options = ServeBenchmark.Options()
            options.trace = access(tracePath, R_OK) == 0 ? tracePath : nil
            options.fleetDevices = devices
            options.fleetRows = rows
            options.clients = clients
            options.ingestRows = postRows
            var results: [ServeBenchmark.Result] = []
            do {
                await results.append(try ServeBenchmark.run(options, directory: directory, executable: ChildProcess.currentExecutablePath, log: &log))
                if let db {
                    // The same fleet on PostgreSQL, in the same run.
                    log.write("\nthe same on PostgreSQL\n")
                    options.postgresURL = db
                    await results.append(try ServeBenchmark.run(options, directory: directory, executable: ChildProcess.currentExecutablePath, log: &log))
                }
            } catch {
                throw FetchCast.fail("\(error)")
            }
            if results.count == 2 {
                var out = FileSink.standardOutput()
                let ms = { (s: Double) in CSVField.fixed(s * 1000, decimals: 2) }
                let pct = { (x: Double) in CSVField.fixed(100 * x, decimals: 0) + "%" }
                var table = [["engine", "devices", "events", "store_KiB_per_device", "warm_up_s", "warm_up_ms_per_device", "in_process_plans_s",
                              "in_process_tasks_plans_s", "http_requests_s", "p99_ms", "warm_p99_ms", "server_peak_MiB", "server_cpu", "postgres_cpu",
                              "two_servers_requests_s", "two_servers_p99_ms", "two_servers_cpu", "two_servers_postgres_cpu",
                              "warm_requests_s", "warm_alternated_s", "sqlite_alternated_s", "warm_vs_sqlite_alternated", "planner_plans_s"]]
                for r in results {
                    let two = r.engine == "postgres"
                    table.append([r.engine, String(r.devices), String(r.events), CSVField.fixed(r.bytesPerDevice / 1024, decimals: 1),
                                  CSVField.fixed(r.warmUpSeconds, decimals: 1), CSVField.fixed(1000 * r.warmUpSeconds / Double(max(r.devices, 1)), decimals: 2),
                                  CSVField.fixed(r.inProcessPlansPerSecond, decimals: 0), CSVField.fixed(r.inProcessTaskPlansPerSecond, decimals: 0),
                                  CSVField.fixed(r.httpRequestsPerSecond, decimals: 0),
                                  ms(r.p99), ms(r.warmP99), CSVField.fixed(Double(r.serverPeakRSSKiB) / 1024, decimals: 0), pct(r.serverCPUShare),
                                  two ? pct(r.databaseCPUShare) : "-", two ? CSVField.fixed(r.twoServersRequestsPerSecond, decimals: 0) : "-",
                                  two ? ms(r.twoServersP99) : "-", two ? pct(r.twoServersCPUShare) : "-", two ? pct(r.twoServersDatabaseCPUShare) : "-",
                                  CSVField.fixed(r.warmRequestsPerSecond, decimals: 0),
                                  r.alternatedWarmRatio > 0 ? CSVField.fixed(r.alternatedWarmRequestsPerSecond, decimals: 0) : "-",
                                  r.alternatedWarmRatio > 0 ? CSVField.fixed(r.alternatedSQLiteWarmRequestsPerSecond, decimals: 0) : "-",
                                  r.alternatedWarmRatio > 0 ? CSVField.fixed(r.alternatedWarmRatio, decimals: 2) + "x" : "-",
                                  CSVField.fixed(r.plannerPlansPerSecond, decimals: 0)])
                }
                TextTable.write(table, rightAligned: Set(1..<23), to: &out)
                log.write("p99 on PostgreSQL \(ms(results[1].p99)) ms for first plans, \(ms(results[1].warmP99)) ms warm (target 10 ms at \(clients) clients for plans answered ahead)\n")
                log.write(workDir == nil && !keep ? "scratch files removed (--keep keeps them)\n" : "scratch files in \(directory)\n")
                try FetchCast.finish(out)
                return
            }
            let r = results[0]
            var out = FileSink.standardOutput()
            let ms = { (s: Double) in CSVField.fixed(s * 1000, decimals: 2) }
            let table = [["devices", "events", "in_process_replay_plans_s", "warm_up_s", "warm_up_MiB", "in_process_plans_s", "answered_ahead", "http_requests_s", "http_vs_in_process", "healthz_requests_s", "p50_ms", "p99_ms", "p99.9_ms",
                          "errors", "warm_requests_s", "warm_p99_ms", "live_requests_s", "live_p99_ms", "server_cpu", "load_cpu", "sweep_s", "server_peak_MiB", "ingest_s", "post_s",
                          "post_vs_ingest", "planner_plans_s"],
                         [String(r.devices), String(r.events), CSVField.fixed(r.inProcessReplayPlansPerSecond, decimals: 0),
                          CSVField.fixed(r.warmUpSeconds, decimals: 1), CSVField.fixed(Double(r.warmUpStoreBytes) / 1_048_576, decimals: 0),
                          CSVField.fixed(r.inProcessPlansPerSecond, decimals: 0), CSVField.fixed(100 * r.inProcessAnsweredAhead, decimals: 0) + "%",
                          CSVField.fixed(r.httpRequestsPerSecond, decimals: 0), CSVField.fixed(r.throughputRatio, decimals: 2) + "x",
                          CSVField.fixed(r.healthzRequestsPerSecond, decimals: 0),
                          ms(r.p50), ms(r.p99), ms(r.p999), String(r.httpErrors),
                          CSVField.fixed(r.warmRequestsPerSecond, decimals: 0), ms(r.warmP99),
                          CSVField.fixed(r.liveRequestsPerSecond, decimals: 0), ms(r.liveP99),
                          CSVField.fixed(100 * r.serverCPUShare, decimals: 0) + "%", CSVField.fixed(100 * r.loadCPUShare, decimals: 0) + "%",
                          CSVField.fixed(r.sweepSeconds, decimals: 2),
                          CSVField.fixed(Double(r.serverPeakRSSKiB) / 1024, decimals: 0), CSVField.fixed(r.cliIngestSeconds, decimals: 2),
                          CSVField.fixed(r.postSeconds, decimals: 2), CSVField.fixed(r.ingestRatio, decimals: 2) + "x",
                          CSVField.fixed(r.plannerPlansPerSecond, decimals: 0)]]
            TextTable.write(table, rightAligned: Set(0..<26), to: &out)
            let verdict = { (ok: Bool) in ok ? "meets" : "MISSES" }
            log.write("HTTP throughput \(CSVField.fixed(r.throughputRatio, decimals: 2))x the in-process rate (target 0.5x: \(verdict(r.throughputRatio >= 0.5)) it; ")
            // What HTTP adds to a plan, in machine time: the HTTP request's cost over the plan's.
            let planMicros = 1e6 * Double(r.inProcessThreads) / max(r.inProcessPlansPerSecond, 1e-9)
            let httpMicros = 1e6 * Double(r.inProcessThreads) / max(r.httpRequestsPerSecond, 1e-9)
            let floorMicros = 1e6 * Double(r.inProcessThreads) / max(r.healthzRequestsPerSecond, 1e-9)
            log.write("a plan takes \(CSVField.fixed(planMicros, decimals: 0)) µs of the machine in process, \(CSVField.fixed(httpMicros, decimals: 0)) µs over HTTP, GET /healthz \(CSVField.fixed(floorMicros, decimals: 0)) µs), ")
            log.write("p99 \(ms(r.p99)) ms (target 10 ms: \(verdict(r.p99 <= 0.010)) it; \(ms(r.warmP99)) ms warm, \(r.warmDevices) devices asked again; \(ms(r.liveP99)) ms while rows of other devices are posted), ")
            log.write("POST \(CSVField.fixed(r.ingestRatio, decimals: 2))x the events/s of fetchcast ingest (target 0.7x: \(verdict(r.ingestRatio >= 0.7)) it)\n")
            log.write(workDir == nil && !keep ? "scratch files removed (--keep keeps them)\n" : "scratch files in \(directory)\n")
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
