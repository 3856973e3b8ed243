#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import FetchCastPredict
import FetchCastStore
import FetchCastTrace
import Synchronization

/// `fetchcast bench serve`: the HTTP service against the library it serves, in one run.
///
/// On a store holding a trace plus a synthetic fleet: the in-process plan rate
/// (``FetchCastService/plan(_:)`` on as many threads as cores) against `GET /v1/devices/{d}/plan`
/// from concurrent keep-alive clients to a `fetchcast serve` child process (latency
/// percentiles, requests/s); a `GET /v1/plans` sweep over every device; the server's peak RSS;
/// and `POST /v1/events` of a large gzip trace against `fetchcast ingest` of the same file.
public enum ServeBenchmark {
    /// What to measure.
    public struct Options: Sendable {
        /// A real trace to ingest first (skipped when `nil`).
        public var trace: String?
        /// Devices of the synthetic fleet.
        public var fleetDevices = 10_000
        /// Rows of the synthetic fleet's trace.
        public var fleetRows = 1_000_000
        /// Rows of the trace posted and ingested.
        public var ingestRows = 500_000
        /// Concurrent keep-alive HTTP clients.
        public var clients = 32
        /// Seconds each rate is measured for.
        public var seconds = 5.0

        /// Creates options with the issue's sizes.
        public init() {}
    }

    /// What was measured.
    public struct Result: Sendable {
        public var devices = 0
        public var events: Int64 = 0
        public var foldSeconds = 0.0
        public var inProcessThreads = 0
        public var inProcessPlansPerSecond = 0.0
        public var httpRequests = 0
        public var httpErrors = 0
        public var httpRequestsPerSecond = 0.0
        public var p50 = 0.0
        public var p99 = 0.0
        public var p999 = 0.0
        public var sweepRecords = 0
        public var sweepSeconds = 0.0
        public var serverPeakRSSKiB = 0
        public var ingestEvents: Int64 = 0
        public var cliIngestSeconds = 0.0
        public var postSeconds = 0.0

        /// HTTP throughput over the in-process plan rate (target: at least 0.5).
        public var throughputRatio: Double { httpRequestsPerSecond / max(inProcessPlansPerSecond, 1e-9) }
        /// POST events/s over `fetchcast ingest` events/s (target: at least 0.7).
        public var ingestRatio: Double { cliIngestSeconds / max(postSeconds, 1e-9) }
    }

    struct Failure: Error, CustomStringConvertible { var description: String }

    /// Runs the benchmark in `directory` (left with its stores and traces for inspection).
    public static func run<Log: TextOutputStream>(_ options: Options, directory: String, executable: String, log: inout Log) throws -> Result {
        var result = Result()
        let store = directory + "/serve-bench.sqlite"
        let fleet = directory + "/fleet.csv.gz"
        log.write("generating a fleet of \(options.fleetDevices) devices, \(options.fleetRows) rows → \(fleet)\n")
        try SyntheticTrace.write(path: fleet, rows: options.fleetRows, devices: options.fleetDevices, seed: 7)
        let inputs = (options.trace.map { [$0] } ?? []) + [fleet]
        log.write("ingesting \(inputs.joined(separator: " + ")) → \(store)\n")
        let ingest = ChildProcess.run([executable, "ingest", "--db", store, "--quiet"] + inputs)
        guard ingest.status == 0 else { throw Failure(description: "fetchcast ingest failed (status \(ingest.status))") }

        // The library, in process: fold once, then plan devices round robin on every core.
        var names: [String] = []
        do {
            let service = try FetchCastService(path: store)
            let folding = WallClock.monotonic()
            try service.foldPending()
            result.foldSeconds = WallClock.monotonic() - folding
            var after: String?
            while true {
                let page = try service.devices(after: after, limit: 10_000)
                names += page.map(\.device)
                guard let last = page.last, page.count == 10_000 else { break }
                after = last.device
            }
            result.devices = names.count
            result.events = Int64(try Store(path: store, create: false).connection.scalarInt("SELECT count(*) FROM event_log"))
            log.write("\(result.devices) devices, \(result.events) events; model folded in \(format(result.foldSeconds)) s\n")
            result.inProcessThreads = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
            let counts = Mutex([Int](repeating: 0, count: result.inProcessThreads))
            let deadline = WallClock.monotonic() + options.seconds
            let started = WallClock.monotonic()
            let shared = names
            DispatchQueue.concurrentPerform(iterations: result.inProcessThreads) { thread in
                var i = thread * 7919, n = 0
                while WallClock.monotonic() < deadline {
                    _ = try? service.plan(PredictionRequest(device: shared[i % shared.count]))
                    i += 1
                    n += 1
                }
                counts.withLock { $0[thread] = n }
            }
            let total = counts.withLock { $0.reduce(0, +) }
            result.inProcessPlansPerSecond = Double(total) / (WallClock.monotonic() - started)
            log.write("in process: \(format(result.inProcessPlansPerSecond, 0)) plans/s on \(result.inProcessThreads) threads\n")
        }

        // The same plans over HTTP, from a `fetchcast serve` child process.
        let server = try ServerProcess(executable: executable, store: store, directory: directory)
        defer { server.stop() }
        let latencies = Mutex([Double]())
        let errors = Mutex(0)
        let encoded = names.map(percentEncoded)
        let port = server.port
        let deadline = WallClock.monotonic() + options.seconds
        let started = WallClock.monotonic()
        // Real threads, one a client (concurrentPerform would run only as many as cores at once).
        Threads.run(count: options.clients) { client in
            var own: [Double] = []
            var failed = 0
            own.reserveCapacity(100_000)
            guard let connection = try? HTTPConnection(port: port) else {
                errors.withLock { $0 += 1 }
                return
            }
            var i = client * 7919
            while WallClock.monotonic() < deadline {
                let t0 = WallClock.monotonic()
                let response = try? connection.request("GET /v1/devices/\(encoded[i % encoded.count])/plan")
                if response?.status == 200 { own.append(WallClock.monotonic() - t0) } else { failed += 1 }
                if response == nil { break }
                i += 1
            }
            latencies.withLock { $0 += own }
            errors.withLock { $0 += failed }
        }
        let elapsed = WallClock.monotonic() - started
        let sorted = latencies.withLock { $0 }.sorted()
        result.httpRequests = sorted.count
        result.httpErrors = errors.withLock { $0 }
        result.httpRequestsPerSecond = Double(sorted.count) / elapsed
        result.p50 = percentile(sorted, 0.5)
        result.p99 = percentile(sorted, 0.99)
        result.p999 = percentile(sorted, 0.999)
        log.write("HTTP: \(format(result.httpRequestsPerSecond, 0)) requests/s from \(options.clients) clients, p50 \(format(result.p50 * 1000)) ms, p99 \(format(result.p99 * 1000)) ms, p99.9 \(format(result.p999 * 1000)) ms, \(result.httpErrors) errors\n")

        // A sweep over every device, then the server's peak memory.
        let sweepStart = WallClock.monotonic()
        let sweep = try HTTPConnection(port: server.port).request("GET /v1/plans?from=now")
        guard sweep.status == 200 else { throw Failure(description: "GET /v1/plans answered \(sweep.status)") }
        result.sweepSeconds = WallClock.monotonic() - sweepStart
        result.sweepRecords = sweep.body.reduce(0) { $0 + ($1 == 10 ? 1 : 0) }
        result.serverPeakRSSKiB = server.peakRSSKiB()
        log.write("sweep: \(result.sweepRecords) fetches of \(result.devices) devices in \(format(result.sweepSeconds)) s; server peak RSS \(result.serverPeakRSSKiB / 1024) MiB\n")
        server.stop()

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
