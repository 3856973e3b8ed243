#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ServeBenchmark {
    /// Rounds of the alternated warm pass: in each, a second of load on either engine.
    static let alternatedRounds = 6

    /// The warm load on the PostgreSQL server and on a `serve` of the SQLite half's store, a
    /// second at a time in turn (PostgreSQL then SQLite, then SQLite then PostgreSQL, …), from
    /// the same clients: both engines measured within the same seconds of a shared host, whose
    /// load moves by a third between the two halves of a run (`GET /healthz` 26.8k against
    /// 18.1k req/s). Each engine's rate is its requests over its own seconds; `nil` when the
    /// SQLite half left no store.
    static func alternatedWarm(
        postgres: ServerProcess, sqliteStore: String, targets: [String], clients: Int, executable: String, directory: String
    ) throws -> (postgres: Double, sqlite: Double, errors: Int)? {
        guard access(sqliteStore, R_OK) == 0 else { return nil }
        let reference = try ServerProcess(executable: executable, store: sqliteStore, directory: directory)
        defer { reference.stop() }
        // Asked once, as the warm pass of each half was: the server's schedulers are then kept.
        _ = try HTTPLoadGenerator(port: reference.port, clients: clients).run(targets: targets, seconds: 1)
        let ports = [postgres.port, reference.port]
        var requests = [0, 0], seconds = [0.0, 0.0], errors = 0
        for round in 0..<alternatedRounds {
            for turn in 0..<2 {
                let engine = round % 2 == 0 ? turn : 1 - turn
                let load = try HTTPLoadGenerator(port: ports[engine], clients: clients).run(targets: targets, seconds: 1)
                requests[engine] += load.latencies.count
                seconds[engine] += load.seconds
                errors += load.errors
            }
        }
        return (Double(requests[0]) / max(seconds[0], 1e-9), Double(requests[1]) / max(seconds[1], 1e-9), errors)
    }
}
