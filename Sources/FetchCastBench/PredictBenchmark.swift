#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FetchCastCore
import FetchCastModel
import FetchCastPredict
import FetchCastStore
import FetchCastTrace

/// `predict` latency: whole CLI calls (process start included) against a `sqlite3` shell call
/// on the same store measured in the same run, and the in-process query's percentiles.
package enum PredictBenchmark {
    /// The measurements.
    package struct Result: Sendable {
        package var events: Int64
        package var device: String
        package var cliMedian: Double
        package var cliP95: Double
        package var sqliteMedian: Double
        /// The in-process query for one device — load its state from the store, decode it,
        /// plan and explain — as `predict` runs it (seconds).
        package var queryP50: Double
        package var queryP99: Double
        package var planP99: Double
        /// In-process query samples taken.
        package var querySamples: Int

        /// The targets (issue 4): the in-process query's p99, and a whole CLI call.
        package static let queryP99Target = 0.001
        package static let cliTarget = 0.050

        /// p99 of the query over its target: at most 1 meets it.
        package var queryP99OfTarget: Double { queryP99 / Self.queryP99Target }
        /// A CLI call's p95 over its target: at most 1 meets it.
        package var cliP95OfTarget: Double { cliP95 / Self.cliTarget }
    }

    static func percentile(_ values: [Double], _ p: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
    }

    /// Ingests `trace` into a fresh store in `directory`, folds the model once, then measures.
    package static func run<Log: TextOutputStream>(trace: String, directory: String, executable: String, calls: Int, log: inout Log) async throws -> Result {
        let db = directory + "/predict-bench.sqlite"
        for suffix in ["", "-wal", "-shm"] { unlink(db + suffix) }
        defer { for suffix in ["", "-wal", "-shm"] { unlink(db + suffix) } }
        log.write("ingesting \(trace)\n")
        guard ChildProcess.run([executable, "ingest", "--quiet", "--db", db, trace]).status == 0 else {
            throw StoreError(path: db, message: "ingest failed in the benchmark")
        }
        let store = try Store(path: db, create: false)
        let snapshot = try await ModelRepository(store: store).refresh()
        let events = try store.lastEventID()
        guard let deviceID = snapshot.models.keys.sorted().first, let device = snapshot.deviceNames[deviceID] else {
            throw StoreError(path: db, message: "the trace has no device to predict for")
        }
        log.write("timing \(calls) CLI calls of `fetchcast predict --device \(device)`\n")
        var cli: [Double] = []
        var sqlite: [Double] = []
        for _ in 0..<calls {
            cli.append(ChildProcess.run([executable, "predict", "--db", db, "--device", device, "--count", "10", "--format", "json"]).seconds)
            sqlite.append(ChildProcess.run(["sqlite3", db, "SELECT count(*) FROM files"]).seconds)
        }
        var query: [Double] = []
        var plan: [Double] = []
        let repository = ModelRepository(store: store)
        // The plan alone, from a scheduler already caught up with the device's events.
        let caughtUp = try await repository.refresh(devices: [device])
        let stored = caughtUp.models[deviceID]!
        guard let scheduler = try await caughtUp.scheduler(
            of: deviceID, apps: stored.appsBySessions(limit: 5), configuration: SchedulerConfiguration(), model: stored.configuration,
            before: stored.lastEventTime!, inclusive: true)
        else { throw StoreError(path: db, message: "no events for device \(device)") }
        // Enough samples that p99 is not one unlucky sample (≥ 10 beyond it).
        let samples = max(calls * 40, 1000)
        log.write("timing \(samples) in-process queries (load + decode + plan)\n")
        for _ in 0..<samples {
            let t0 = WallClock.monotonic()
            let s = try await repository.refresh(devices: [device])
            let p = try await Predictor.predict(PredictionRequest(device: device, count: 10), snapshot: s)
            let t1 = WallClock.monotonic()
            query.append(t1 - t0)
            let t2 = WallClock.monotonic()
            _ = scheduler.plan(from: stored.lastEventTime!)
            plan.append(WallClock.monotonic() - t2)
            guard !p.isEmpty else {
                throw StoreError(path: db, message: "predict returned no fetch for device \(device): the benchmark would time an empty answer")
            }
        }
        return Result(events: events, device: device, cliMedian: percentile(cli, 0.5), cliP95: percentile(cli, 0.95),
                      sqliteMedian: percentile(sqlite, 0.5), queryP50: percentile(query, 0.5), queryP99: percentile(query, 0.99),
                      planP99: percentile(plan, 0.99), querySamples: samples)
    }
}

/// Per-event model update cost as history grows: if updates are O(1) in history, the cost per
/// event at 10 M events equals the cost at 1 M.
package enum ModelUpdateBenchmark {
    /// Nanoseconds per `observe` just before each checkpoint: the fastest of five sub-windows
    /// of the last `window` events.
    package static func run<Log: TextOutputStream>(checkpoints: [Int], window: Int = 200_000, log: inout Log) -> [(events: Int, nanosPerEvent: Double)] {
        var model = DeviceModel()
        var rng = SeededGenerator(seed: 7)
        var t = 1_700_000_000.0
        var results: [(Int, Double)] = []
        var done = 0
        for checkpoint in checkpoints.sorted() {
            let untimed = max(0, checkpoint - window - done)
            for _ in 0..<untimed { step(&model, &t, &rng) }
            done += untimed
            // The fastest of five sub-windows: the least disturbed by other work on the machine.
            let slice = max((checkpoint - done) / 5, 1)
            var best = Double.infinity
            while done < checkpoint {
                let n = min(slice, checkpoint - done)
                let t0 = WallClock.monotonic()
                for _ in 0..<n { step(&model, &t, &rng) }
                best = min(best, (WallClock.monotonic() - t0) / Double(n) * 1e9)
                done += n
            }
            results.append((checkpoint, best))
            log.write("  \(checkpoint) events: \(CSVField.fixed(best, decimals: 0)) ns/event\n")
        }
        return results
    }

    /// Nanoseconds per `observe` over a burst of `launches` launches of three apps within one
    /// minute (all within τ of each other), then one launch two hours later that expires them:
    /// if updates are O(1) amortised whatever the spacing, the cost is flat in `launches`.
    package static func burst(launches: Int) -> Double {
        var model = DeviceModel()
        let start = 1_700_000_000.0
        let step = 60.0 / Double(max(launches, 1))
        let t0 = WallClock.monotonic()
        for i in 0..<launches {
            model.observe(DeviceEvent(time: start + Double(i) * step, utcOffsetSeconds: 3600, app: Int32(i % 3), kind: .launch))
        }
        model.observe(DeviceEvent(time: start + 7200, utcOffsetSeconds: 3600, app: 3, kind: .launch))
        return (WallClock.monotonic() - t0) / Double(launches + 1) * 1e9
    }

    @inline(__always)
    static func step(_ model: inout DeviceModel, _ t: inout Double, _ rng: inout SeededGenerator) {
        t += Double(rng.next() % 1200)
        let r = rng.next()
        let app = Int32(r % 40)
        if r % 13 == 0 {
            model.observe(DeviceEvent(time: t, utcOffsetSeconds: 3600, app: app, kind: .fetch, result: r % 3 == 0 ? .noData : .newData))
        } else {
            model.observe(DeviceEvent(time: t, utcOffsetSeconds: 3600, app: app, kind: .launch))
        }
    }
}
