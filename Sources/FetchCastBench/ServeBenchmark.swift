#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import FetchCastCore
import Foundation
import FetchCastPostgres
import FetchCastPredict
import FetchCastServe
import FetchCastStore
import FetchCastTrace
import Synchronization

/// `fetchcast bench serve`: the HTTP service against the library it serves, in one run.
///
/// On a store holding a trace plus a synthetic fleet: the in-process plan rate
/// (``FetchCastService/plan(_:on:)`` on as many threads as cores) against `GET /v1/devices/{d}/plan`
/// from concurrent keep-alive clients to a `fetchcast serve` child process (latency
/// percentiles, requests/s); a `GET /v1/plans` sweep over every device; the server's peak RSS;
/// and `POST /v1/events` of a large gzip trace against `fetchcast ingest` of the same file.
package enum ServeBenchmark {
    /// What to measure.
    package struct Options: Sendable {
        /// A real trace to ingest first (skipped when `nil`).
        package var trace: String?
        /// Devices of the synthetic fleet.
        package var fleetDevices = 10_000
        /// Rows of the synthetic fleet's trace.
        package var fleetRows = 1_000_000
        /// Rows of the trace posted and ingested.
        package var ingestRows = 500_000
        /// Concurrent keep-alive HTTP clients.
        package var clients = 32
        /// Seconds each rate is measured for.
        package var seconds = 5.0
        /// A `postgres://` URL: the store is then a new database on that server (created, and
        /// dropped after the run), two `serve` processes share it for a second HTTP load, and
        /// the POST-against-ingest part is left to `bench ingest --db`.
        package var postgresURL: String?

        /// Creates options with the issue's sizes.
        package init() {}
    }

    /// What was measured.
    package struct Result: Sendable {
        package var devices = 0
        package var events: Int64 = 0
        package var foldSeconds = 0.0
        package var inProcessThreads = 0
        /// First plans with every device's scheduler saved (the reference of the HTTP load).
        package var inProcessPlansPerSecond = 0.0
        /// The same from as many tasks as HTTP clients, through the entry the plan route takes
        /// (``FetchCastService/planWithNote(_:on:)``: a plan kept in memory waits for its check
        /// holding no thread).
        package var inProcessTaskPlansPerSecond = 0.0
        package var inProcessTasks = 0
        /// Plans per second through the public `Planner` of the same store from as many tasks.
        package var plannerPlansPerSecond = 0.0
        /// First plans without saved schedulers: each replays its device's history.
        package var inProcessReplayPlansPerSecond = 0.0
        /// The warm-up that saves every device's scheduler (``FetchCastService/keepSchedulersCurrent(shouldStop:)``).
        package var warmUpSeconds = 0.0
        package var warmUpSaved = 0
        /// What the saved schedulers add to the store (database and write-ahead log).
        package var warmUpStoreBytes: Int64 = 0
        /// Of the in-process plans with saved schedulers, the share answered from the plans the
        /// warm-up kept ahead (``FetchCastService/plansAnsweredAhead``).
        package var inProcessAnsweredAhead = 0.0
        /// Of those, the share answered from the tables kept in memory (``FetchCastService/plansInMemory``;
        /// 0 on SQLite, which keeps none there).
        package var inProcessAnsweredFromMemory = 0.0
        /// Seconds from the `serve` process's start until it had loaded the plans kept ahead into
        /// its memory (PostgreSQL; the HTTP load starts after it), `nil` when it loaded none.
        package var preloadSeconds: Double?
        /// `GET /healthz` from the same clients: what the HTTP layer alone serves (no store, no plan).
        package var healthzRequestsPerSecond = 0.0
        package var httpRequests = 0
        package var httpErrors = 0
        package var httpRequestsPerSecond = 0.0
        /// Wall-clock seconds of the HTTP load.
        package var httpSeconds = 0.0
        /// CPU seconds the server spent during the HTTP load.
        package var serverCPUSeconds = 0.0
        /// CPU seconds the load generator (this process) spent during the HTTP load.
        package var loadCPUSeconds = 0.0
        package var p50 = 0.0
        package var p99 = 0.0
        package var p999 = 0.0
        /// Devices of the warm pass: asked again, at the same instants, after the cold load.
        package var warmDevices = 0
        package var warmRequestsPerSecond = 0.0
        package var warmP50 = 0.0
        package var warmP99 = 0.0
        package var warmP999 = 0.0
        /// The warm pass again while another client posts one row of another device every
        /// ``livePostInterval``: what a live backend sees (every POST is folded).
        package var liveRequestsPerSecond = 0.0
        package var liveP50 = 0.0
        package var liveP99 = 0.0
        package var liveP999 = 0.0
        package var livePosts = 0
        package var sweepRecords = 0
        package var sweepSeconds = 0.0
        package var serverPeakRSSKiB = 0
        package var ingestEvents: Int64 = 0
        /// `POST /v1/events` of one row on the benchmark's store.
        package var smallPostSeconds = 0.0
        /// The plan of that row's device asked right after.
        package var planAfterPostSeconds = 0.0
        /// Another device's plan asked right after that.
        package var otherPlanAfterPostSeconds = 0.0
        package var cliIngestSeconds = 0.0
        package var postSeconds = 0.0
        /// The store after the warm-up: file and WAL, or the database's size.
        package var storeBytes: Int64 = 0
        /// The engine: `sqlite` or `postgres`.
        package var engine = "sqlite"
        /// The same cold load split between two `serve` processes on one database (PostgreSQL).
        package var twoServersRequestsPerSecond = 0.0
        package var twoServersP99 = 0.0
        package var twoServersErrors = 0
        /// CPU seconds both servers spent during that load (each of its seconds, over the cores).
        package var twoServersCPUShare = 0.0
        package var twoServersLoadCPUShare = 0.0
        /// The postgres server processes' CPU share during the one-process and the two-process loads.
        package var databaseCPUShare = 0.0
        package var twoServersDatabaseCPUShare = 0.0

        /// The warm load alternated a second at a time with a `serve` of the SQLite half's store
        /// (PostgreSQL; ``alternatedWarm(postgres:sqliteStore:targets:clients:executable:directory:)``):
        /// this engine's rate, and SQLite's in the seconds between.
        package var alternatedWarmRequestsPerSecond = 0.0
        package var alternatedSQLiteWarmRequestsPerSecond = 0.0
        /// PostgreSQL's alternated warm rate over SQLite's, 0 when not measured.
        package var alternatedWarmRatio: Double {
            alternatedSQLiteWarmRequestsPerSecond > 0 ? alternatedWarmRequestsPerSecond / alternatedSQLiteWarmRequestsPerSecond : 0
        }

        /// Bytes the store keeps per device after the warm-up.
        package var bytesPerDevice: Double { Double(storeBytes) / Double(max(devices, 1)) }

        /// HTTP throughput over the in-process plan rate (target: at least 0.5).
        package var throughputRatio: Double { httpRequestsPerSecond / max(inProcessPlansPerSecond, 1e-9) }
        /// The server's share of the machine's CPU during the HTTP load (1 = every core).
        package var serverCPUShare: Double { serverCPUSeconds / max(httpSeconds * Double(max(inProcessThreads, 1)), 1e-9) }
        /// The load generator's share of the machine's CPU during the HTTP load.
        package var loadCPUShare: Double { loadCPUSeconds / max(httpSeconds * Double(max(inProcessThreads, 1)), 1e-9) }
        /// POST events/s over `fetchcast ingest` events/s (target: at least 0.7).
        package var ingestRatio: Double { cliIngestSeconds / max(postSeconds, 1e-9) }
    }

    struct Failure: Error, CustomStringConvertible { var description: String }

    /// Runs the benchmark in `directory` (left with its stores and traces for inspection).
    package static func run<Log: TextOutputStream>(_ options: Options, directory: String, executable: String, log: inout Log) async throws -> Result {
        var result = Result()
        let sqliteStore = directory + "/serve-bench.sqlite"
        var store = sqliteStore
        var storage = ServiceStorage.sqlite(path: store)
        // A store left in a reused --work-dir would already hold the fleet and its saved rows.
        // The PostgreSQL half keeps the SQLite half's: its server is the alternated reference.
        if options.postgresURL == nil {
            for suffix in ["", "-wal", "-shm"] { unlink(store + suffix) }
        }
        if let url = options.postgresURL {
            let database = "fetchcast_bench_serve"
            try PostgresIngestBenchmark.admin(url, "DROP DATABASE IF EXISTS \(database)")
            try PostgresIngestBenchmark.admin(url, "CREATE DATABASE \(database)")
            store = PostgresIngestBenchmark.replacingDatabase(of: url, with: database)
            storage = PostgresModelStore.serviceStorage(try PostgresLocation(url: store))
            result.engine = "postgres"
        }
        defer {
            if let url = options.postgresURL { try? PostgresIngestBenchmark.admin(url, "DROP DATABASE IF EXISTS fetchcast_bench_serve WITH (FORCE)") }
        }
        let fleet = directory + "/fleet.csv.gz"
        log.write("generating a fleet of \(options.fleetDevices) devices, \(options.fleetRows) rows → \(fleet)\n")
        try SyntheticTrace.write(path: fleet, rows: options.fleetRows, devices: options.fleetDevices, seed: 7)
        let inputs = (options.trace.map { [$0] } ?? []) + [fleet]
        log.write("ingesting \(inputs.joined(separator: " + ")) → \(storage.location)\n")
        let ingest = ChildProcess.run([executable, "ingest", "--db", store, "--quiet"] + inputs)
        guard ingest.status == 0 else { throw Failure(description: "fetchcast ingest failed (status \(ingest.status))") }

        // The library, in process: fold once, then plan devices round robin on every core,
        // first without saved schedulers (each first plan replays its device's history), then,
        // after the warm-up `serve` runs in the background, with them (a first plan restores
        // one row): the reference for the HTTP load, whose server starts with them saved.
        var names: [String] = []
        // Each device's plan is asked for a second or two after its last event, as a backend asks
        // right after it hears of one (a plan from the clock, years after these traces, is
        // empty without reading anything: nothing is pending so long after a device's last event).
        var asks: [Double] = []
        do {
            let service = try await FetchCastService(storage: storage)
            let folding = WallClock.monotonic()
            try await service.foldPending()
            result.foldSeconds = WallClock.monotonic() - folding
            var after: String?
            while true {
                let page = try await service.devices(after: after, limit: 10_000)
                names += page.map(\.device)
                // Whole seconds (the route takes Unix seconds): one to two seconds after it.
                asks += page.map { (Double($0.lastMicros) / 1_000_000).rounded(.down) + 2 }
                guard let last = page.last, page.count == 10_000 else { break }
                after = last.device
            }
            result.devices = names.count
            result.events = try await storage.open(false).lastEventID()  // events are numbered 1…n
            log.write("\(result.devices) devices, \(result.events) events; model folded in \(format(result.foldSeconds)) s\n")
            result.inProcessThreads = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
            result.inProcessReplayPlansPerSecond = try await planInProcess(
                service, names: names, asks: asks, threads: result.inProcessThreads, seconds: options.seconds).perSecond
            log.write("in process, no saved schedulers (each first plan replays its device's history): \(format(result.inProcessReplayPlansPerSecond, 0)) plans/s on \(result.inProcessThreads) threads\n")

            let bytesBefore = await service.storeBytes
            let warming = WallClock.monotonic()
            let warmed = try await service.keepSchedulersCurrent()
            result.warmUpSeconds = WallClock.monotonic() - warming
            result.warmUpSaved = warmed.saved
            result.warmUpStoreBytes = await service.storeBytes - bytesBefore
            result.storeBytes = await service.storeBytes
            log.write("warm-up: \(warmed.saved) schedulers of \(warmed.devices) devices saved in \(format(result.warmUpSeconds)) s (one thread); store +\(format(Double(result.warmUpStoreBytes) / 1_048_576, 0)) MiB, \(format(result.bytesPerDevice / 1024, 0)) KiB a device in all\n")

            // A new service: nothing of the first pass in memory.
            let served = try await FetchCastService(storage: storage)
            // As a served process does after its warm-up pass (PostgreSQL; SQLite keeps none in
            // memory): the plans kept ahead loaded into memory before the load.
            let loading = WallClock.monotonic()
            let loaded = try await served.preloadPlans(on: InlineWork())
            if loaded > 0 { log.write("in process: \(loaded) plan tables loaded into memory in \(format(WallClock.monotonic() - loading)) s\n") }
            let (perSecond, planned) = try await planInProcess(served, names: names, asks: asks, threads: result.inProcessThreads, seconds: options.seconds)
            result.inProcessPlansPerSecond = perSecond
            result.inProcessAnsweredAhead = Double(served.plansAnsweredAhead) / Double(max(1, planned))
            let memory = served.plansInMemory
            result.inProcessAnsweredFromMemory = Double(memory.answered) / Double(max(1, planned))
            let fromMemory = memory.checks == 0 ? "" : ", \(format(100 * result.inProcessAnsweredFromMemory, 0))% from memory after \(memory.checks) checks; \(memory.tables) tables, \(memory.bytes >> 20) MiB"
            log.write("in process, saved schedulers and plans kept ahead: \(format(result.inProcessPlansPerSecond, 0)) plans/s on \(result.inProcessThreads) threads (\(format(100 * result.inProcessAnsweredAhead, 0))% answered from the plans kept ahead\(fromMemory))\n")
            result.inProcessTasks = options.clients
            result.inProcessTaskPlansPerSecond = await planInProcess(served, names: names, asks: asks, tasks: options.clients, seconds: options.seconds)
            log.write("in process from \(options.clients) tasks (the plan route's entry): \(format(result.inProcessTaskPlansPerSecond, 0)) plans/s\n")
            // The public entry a library user takes: a planner of its own on the same store.
            let location: StoreLocation = options.postgresURL == nil ? .sqlite(path: store) : try .postgres(url: store)
            result.plannerPlansPerSecond = try await planWithPlanner(location, names: names, asks: asks, tasks: options.clients, seconds: options.seconds)
            log.write("in process through Planner (the library's public entry) from \(options.clients) tasks: \(format(result.plannerPlansPerSecond, 0)) plans/s\n")
        }

        // The same plans over HTTP, from a `fetchcast serve` child process.
        let server = try ServerProcess(executable: executable, store: store, directory: directory)
        defer { server.stop() }
        // On PostgreSQL the first load starts once the server has loaded the plans kept ahead
        // into its memory (each device's first plan is then answered from memory too).
        if options.postgresURL != nil {
            result.preloadSeconds = server.waitForLog(Self.preloadedLog, seconds: Self.preloadWait)
            log.write(result.preloadSeconds.map { "plans kept ahead loaded into the server's memory \(format($0)) s after its start\n" }
                ?? "the server loaded no plans into memory within \(Int(Self.preloadWait)) s of its start\n")
        }
        let targets = zip(names, asks).map { "/v1/devices/\(percentEncoded($0))/plan?at=\(Int64($1))" }
        let serverCPUStart = server.cpuSeconds()
        let databaseCPUStart = Self.databaseCPUSeconds(options.postgresURL)
        let load = try HTTPLoadGenerator(port: server.port, clients: options.clients).run(targets: targets, seconds: options.seconds)
        result.serverCPUSeconds = server.cpuSeconds() - serverCPUStart
        let cores = Double(max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        result.databaseCPUShare = (Self.databaseCPUSeconds(options.postgresURL) - databaseCPUStart) / (load.seconds * cores)
        result.loadCPUSeconds = load.cpuSeconds
        result.httpSeconds = load.seconds
        let sorted = load.latencies.sorted()
        result.httpRequests = sorted.count
        result.httpErrors = load.errors
        result.httpRequestsPerSecond = Double(sorted.count) / load.seconds
        result.p50 = percentile(sorted, 0.5)
        result.p99 = percentile(sorted, 0.99)
        result.p999 = percentile(sorted, 0.999)
        log.write("HTTP: \(format(result.httpRequestsPerSecond, 0)) requests/s from \(options.clients) clients, p50 \(format(result.p50 * 1000)) ms, p99 \(format(result.p99 * 1000)) ms, p99.9 \(format(result.p999 * 1000)) ms, \(result.httpErrors) errors\n")
        log.write("CPU in those \(format(result.httpSeconds)) s: server \(format(result.serverCPUSeconds)) s, load generator \(format(result.loadCPUSeconds)) s (of \(format(result.httpSeconds * Double(result.inProcessThreads))) s on \(result.inProcessThreads) cores)\n")

        // Two processes on one database (PostgreSQL): the same cold load, half the clients on
        // each. On 2 cores they contend with each other, the database and the load generator.
        if options.postgresURL != nil {
            let second = try ServerProcess(executable: executable, store: store, directory: directory)
            defer { second.stop() }
            _ = second.waitForLog(Self.preloadedLog, seconds: Self.preloadWait)
            let starts = (server.cpuSeconds(), second.cpuSeconds(), Self.databaseCPUSeconds(options.postgresURL))
            let half = max(1, options.clients / 2)
            let loads = Mutex<[HTTPLoadGenerator.Outcome?]>([nil, nil])
            let ports = [server.port, second.port]
            let offsets = [0, targets.count / 2]
            DispatchQueue.concurrentPerform(iterations: 2) { i in
                let shifted = Array(targets[offsets[i]...] + targets[..<offsets[i]])
                let run = try? HTTPLoadGenerator(port: ports[i], clients: half).run(targets: shifted, seconds: options.seconds)
                loads.withLock { $0[i] = run }
            }
            let both = loads.withLock { $0 }.compactMap { $0 }
            guard both.count == 2 else { throw Failure(description: "the load on two serve processes failed") }
            let seconds = both.map(\.seconds).max() ?? options.seconds
            let latencies = both.flatMap(\.latencies).sorted()
            result.twoServersRequestsPerSecond = both.reduce(0) { $0 + Double($1.latencies.count) / $1.seconds }
            result.twoServersP99 = percentile(latencies, 0.99)
            result.twoServersErrors = both.reduce(0) { $0 + $1.errors }
            result.twoServersCPUShare = (server.cpuSeconds() - starts.0 + second.cpuSeconds() - starts.1) / (seconds * cores)
            result.twoServersLoadCPUShare = (both.map(\.cpuSeconds).max() ?? 0) / (seconds * cores)  // each measured the whole process
            result.twoServersDatabaseCPUShare = (Self.databaseCPUSeconds(options.postgresURL) - starts.2) / (seconds * cores)
            log.write("HTTP, two serve processes on the database (\(half) clients each): \(format(result.twoServersRequestsPerSecond, 0)) requests/s, p99 \(format(result.twoServersP99 * 1000)) ms, \(result.twoServersErrors) errors; CPU: servers \(format(100 * result.twoServersCPUShare, 0))%, PostgreSQL \(format(100 * result.twoServersDatabaseCPUShare, 0))%, load generator \(format(100 * result.twoServersLoadCPUShare, 0))% of the machine (one process: servers \(format(100 * result.serverCPUShare, 0))%, PostgreSQL \(format(100 * result.databaseCPUShare, 0))%)\n")
        }

        // The HTTP layer alone, from the same clients: `GET /healthz` (no store, no plan).
        let floor = try HTTPLoadGenerator(port: server.port, clients: options.clients).run(targets: ["/healthz"], seconds: options.seconds)
        result.healthzRequestsPerSecond = Double(floor.latencies.count) / floor.seconds
        result.httpErrors += floor.errors
        log.write("HTTP alone (GET /healthz from the same clients): \(format(result.healthzRequestsPerSecond, 0)) requests/s\n")

        // The warm pass: a working set of devices that fits the server's scheduler cache, asked
        // once to fill it, then loaded the same way. What a backend that asks again about the
        // devices it asked about last pays: a plan goes on from the kept scheduler.
        let warm = Array(targets.prefix(Self.warmDevices))
        result.warmDevices = warm.count
        _ = try HTTPLoadGenerator(port: server.port, clients: options.clients).run(targets: warm, seconds: 1)
        let warmLoad = try HTTPLoadGenerator(port: server.port, clients: options.clients).run(targets: warm, seconds: options.seconds)
        let warmSorted = warmLoad.latencies.sorted()
        result.httpErrors += warmLoad.errors
        result.warmRequestsPerSecond = Double(warmSorted.count) / warmLoad.seconds
        (result.warmP50, result.warmP99, result.warmP999) =
            (percentile(warmSorted, 0.5), percentile(warmSorted, 0.99), percentile(warmSorted, 0.999))
        log.write("HTTP, warm (the first \(warm.count) devices again): \(format(result.warmRequestsPerSecond, 0)) requests/s, p50 \(format(result.warmP50 * 1000)) ms, p99 \(format(result.warmP99 * 1000)) ms, p99.9 \(format(result.warmP999 * 1000)) ms, \(warmLoad.errors) errors\n")

        // The same warm load alternated with SQLite's server. Not the first device: the SQLite
        // half's fold pause gave it a row after these plans' instant.
        if options.postgresURL != nil, let alternated = try alternatedWarm(
            postgres: server, sqliteStore: sqliteStore, targets: Array(warm.dropFirst()), clients: options.clients,
            executable: executable, directory: directory) {
            (result.alternatedWarmRequestsPerSecond, result.alternatedSQLiteWarmRequestsPerSecond) = (alternated.postgres, alternated.sqlite)
            result.httpErrors += alternated.errors
            log.write("HTTP, warm, alternated a second at a time with a serve of the SQLite half's store (\(Self.alternatedRounds) rounds, \(warm.count - 1) devices): PostgreSQL \(format(alternated.postgres, 0)) requests/s, SQLite \(format(alternated.sqlite, 0)): \(format(result.alternatedWarmRatio))x, \(alternated.errors) errors\n")
        }

        // The live pass: the same warm load while rows of other devices arrive, one POST every
        // `livePostInterval` (each one a transaction the writer folds). Within a prior epoch
        // the posts move no prior of the devices asked about, so their schedulers stay kept.
        let posters = Array(zip(names, asks).dropFirst(warm.count))
        let livePosted = Mutex(0)
        let stop = Mutex(false)
        let port = server.port
        let livePoster = Thread(block: {
            guard let connection = try? HTTPConnection(port: port) else { return }
            var i = 0
            while !stop.withLock({ $0 }), i < posters.count {
                let (device, at) = posters[i]
                let row = "time,device,app,event,result,bytes,duration_ms\n"
                    + "\(Timestamp.format(micros: Int64(at * 1_000_000), utcOffsetSeconds: 0)),\(device),com.fetchcast.bench.live,launch,,,\n"
                if let answer = try? Array(row.utf8).withUnsafeBytes({ try connection.request("POST /v1/events", body: $0) }), answer.status == 200 {
                    livePosted.withLock { $0 += 1 }
                }
                i += 1
                usleep(useconds_t(Self.livePostInterval * 1_000_000))
            }
        })
        livePoster.start()
        let liveLoad = try HTTPLoadGenerator(port: server.port, clients: options.clients).run(targets: warm, seconds: options.seconds)
        stop.withLock { $0 = true }
        while !livePoster.isFinished { usleep(10_000) }
        let liveSorted = liveLoad.latencies.sorted()
        result.httpErrors += liveLoad.errors
        result.livePosts = livePosted.withLock { $0 }
        result.liveRequestsPerSecond = Double(liveSorted.count) / liveLoad.seconds
        (result.liveP50, result.liveP99, result.liveP999) = (percentile(liveSorted, 0.5), percentile(liveSorted, 0.99), percentile(liveSorted, 0.999))
        log.write("HTTP, live (the warm load while \(result.livePosts) POSTs of one row of other devices arrive): \(format(result.liveRequestsPerSecond, 0)) requests/s, p50 \(format(result.liveP50 * 1000)) ms, p99 \(format(result.liveP99 * 1000)) ms, p99.9 \(format(result.liveP999 * 1000)) ms, \(liveLoad.errors) errors\n")

        // A sweep over every device, then the server's peak memory.
        let sweepStart = WallClock.monotonic()
        let sweep = try HTTPConnection(port: server.port).request("GET /v1/plans?from=now&limit=100000")  // every device: one page (fleets here are at most 100,000)
        guard sweep.status == 200 else { throw Failure(description: "GET /v1/plans answered \(sweep.status)") }
        result.sweepSeconds = WallClock.monotonic() - sweepStart
        result.sweepRecords = sweep.body.reduce(0) { $0 + ($1 == 10 ? 1 : 0) }
        result.serverPeakRSSKiB = server.peakRSSKiB()
        log.write("sweep: \(result.sweepRecords) fetches of \(result.devices) devices in \(format(result.sweepSeconds)) s; server peak RSS \(result.serverPeakRSSKiB / 1024) MiB\n")

        // The fold pause: one row posted for a device, then at once that device's plan (which
        // must reflect the row: read-your-writes) and another device's plan.
        let device = names[0], other = names[names.count / 2]
        let row = "time,device,app,event,result,bytes,duration_ms\n"
            + "\(Timestamp.format(micros: Int64(WallClock.now() * 1_000_000), utcOffsetSeconds: 0)),\(device),com.fetchcast.bench,launch,,,\n"
        let connection = try HTTPConnection(port: server.port)
        var t0 = WallClock.monotonic()
        let postedRow = try Array(row.utf8).withUnsafeBytes { try connection.request("POST /v1/events", body: $0) }
        result.smallPostSeconds = WallClock.monotonic() - t0
        t0 = WallClock.monotonic()
        let own = try connection.request("GET /v1/devices/\(percentEncoded(device))/plan?app=com.fetchcast.bench")
        result.planAfterPostSeconds = WallClock.monotonic() - t0
        t0 = WallClock.monotonic()
        let others = try connection.request("GET /v1/devices/\(percentEncoded(other))/plan")
        result.otherPlanAfterPostSeconds = WallClock.monotonic() - t0
        guard postedRow.status == 200, own.status == 200, others.status == 200 else {
            throw Failure(description: "POST of one row and the plans after it answered \(postedRow.status), \(own.status), \(others.status)")
        }
        log.write("fold pause: POST of 1 row \(format(result.smallPostSeconds * 1000)) ms; then its device's plan (with the row's app) \(format(result.planAfterPostSeconds * 1000)) ms, another device's \(format(result.otherPlanAfterPostSeconds * 1000)) ms\n")
        server.stop()
        guard options.postgresURL == nil else { return result }

        // POST of a large gzip trace against `fetchcast ingest` of the same file, fresh stores.
        let big = try SyntheticTrace.generate(rows: options.ingestRows, in: directory, name: "post", log: &log)
        let cli = ChildProcess.run([executable, "ingest", "--db", directory + "/cli-ingest.sqlite", "--quiet", big.path])
        guard cli.status == 0 else { throw Failure(description: "fetchcast ingest failed (status \(cli.status))") }
        result.cliIngestSeconds = cli.seconds
        let poster = try ServerProcess(executable: executable, store: directory + "/post-ingest.sqlite", directory: directory)
        defer { poster.stop() }
        let bytes = try readFile(big.path)
        let postStart = WallClock.monotonic()
        let posted = try bytes.withUnsafeBytes { try HTTPConnection(port: poster.port).request("POST /v1/events", body: $0) }
        result.postSeconds = WallClock.monotonic() - postStart
        guard posted.status == 200 else { throw Failure(description: "POST /v1/events answered \(posted.status): \(String(decoding: posted.body, as: UTF8.self))") }
        result.ingestEvents = Int64(options.ingestRows)
        log.write("ingest of \(options.ingestRows) rows: fetchcast ingest \(format(cli.seconds)) s, POST /v1/events \(format(result.postSeconds)) s\n")
        return result
    }

    /// CPU seconds (user + system) of every process named `postgres` this user can read (the
    /// throwaway cluster of the tests, or a local server); 0 without a URL or on another machine.
    static func databaseCPUSeconds(_ url: String?) -> Double {
        guard url != nil, let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return 0 }
        var total = 0.0
        for pid in entries where pid.allSatisfy(\.isNumber) {
            guard let bytes = try? readFile("/proc/\(pid)/stat"), let open = bytes.firstIndex(of: UInt8(ascii: "(")),
                  let close = bytes.lastIndex(of: UInt8(ascii: ")")), String(decoding: bytes[(open + 1)..<close], as: UTF8.self) == "postgres"
            else { continue }
            let fields = String(decoding: bytes[(close + 1)...], as: UTF8.self).split(separator: " ")
            if fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) { total += user + system }
        }
        return total / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// What `serve` logs once it loaded the plans kept ahead into memory, and how long the
    /// benchmark waits for it.
    static let preloadedLog = "plans kept ahead loaded into memory"
    static let preloadWait = 300.0

    /// Devices of the warm pass (their schedulers fit the server's cache: 32 MiB).
    static let warmDevices = 200

    /// Seconds between two POSTs of the live pass.
    static let livePostInterval = 0.1

    static func percentile(_ sorted: [Double], _ q: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * q).rounded(.up)) - 1)]
    }

    static func format(_ x: Double, _ decimals: Int = 2) -> String { CSVField.fixed(x, decimals: decimals) }

    static func percentEncoded(_ s: String) -> String {
        var out = ""
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.append(Character(UnicodeScalar(byte)))
            default:
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }

    static func readFile(_ path: String) throws -> [UInt8] {
        let input = try RawInput(path: path)
        var out: [UInt8] = []
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { chunk.deallocate() }
        while true {
            let n = try input.read(into: chunk)
            if n == 0 { return out }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[0..<n]))
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
