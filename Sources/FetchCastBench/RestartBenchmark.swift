#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FetchCastCore
import Foundation
import Synchronization

/// `fetchcast bench restart`: a PostgreSQL restart under load, as an operator's drill.
///
/// A `fetchcast serve` child on a new database of the server a `postgres://` URL names, a
/// small fleet posted to it, then, while clients ask for plans and a poster posts one small body
/// after another (each of a device of its own), the restart command runs (e.g. `pg_ctl restart`).
/// Afterwards the database is read back: every POST answered 200 must have all its rows stored
/// (an acknowledged POST is never lost), and plans must answer 200 again soon after the command
/// ends (the database's return). While the database is away every answer must be 200 or 503
/// with `Retry-After` (a 500 is a bug).
package enum RestartBenchmark {
    /// What to run.
    package struct Options: Sendable {
        /// A `postgres://` URL whose user may create databases; the drill's database is created
        /// beside the URL's and dropped after the run.
        package var postgresURL: String
        /// The shell command that restarts the database server (it returns once the server is back).
        package var restartCommand: String
        /// Concurrent clients asking for plans.
        package var clients = 4
        /// Seconds of load before the restart, and after the plans answer again.
        package var secondsBefore = 3.0
        package var secondsAfter = 3.0
        /// The most seconds from the command's end until a plan answers 200 (the target).
        package var recoveryTarget = 10.0

        package init(postgresURL: String, restartCommand: String) {
            self.postgresURL = postgresURL
            self.restartCommand = restartCommand
        }
    }

    /// What the drill saw.
    package struct Result: Sendable {
        /// POSTs made, answered 200, and of those with a row missing from the database.
        package var posts = 0
        package var acknowledged = 0
        package var lostAcknowledged: [String] = []
        /// Plan requests made during the whole drill.
        package var plans = 0
        /// Every answer's status, counted (0: no answer, the connection failed).
        package var statuses: [Int: Int] = [:]
        /// 503 answers without `Retry-After`.
        package var unavailableWithoutRetryAfter = 0
        /// The restart command's exit status and wall time.
        package var commandStatus: Int32 = 0
        package var commandSeconds = 0.0
        /// Seconds from the command's end until the first plan answered 200 after it (`nil`: none
        /// within a minute).
        package var recoverySeconds: Double?
        /// Whether the serve process was still running at the end.
        package var serverAlive = true

        /// Whether the drill passed: the command worked, nothing acknowledged was lost, no 500
        /// or other unexpected status, every 503 said when to retry, plans back within the target.
        package func passed(recoveryTarget: Double) -> Bool {
            commandStatus == 0 && lostAcknowledged.isEmpty && serverAlive && unavailableWithoutRetryAfter == 0
                && statuses.keys.allSatisfy { [0, 200, 503].contains($0) }
                && (recoverySeconds.map { $0 <= recoveryTarget } ?? false)
        }
    }

    /// Devices of the fleet posted before the load, rows each and the rows of each later POST.
    static let fleetDevices = 20
    static let postRows = 3
    /// The fleet's days, from 2024-03-04 (a Monday) 00:00 UTC.
    static let fleetStart = 1_709_510_400.0
    static let fleetDays = 14

    /// Runs the drill (see the type's description).
    package static func run<Log: TextOutputStream>(_ options: Options, directory: String, executable: String, log: inout Log) throws -> Result {
        let database = "fetchcast_bench_restart"
        try PostgresIngestBenchmark.admin(options.postgresURL, "DROP DATABASE IF EXISTS \(database) WITH (FORCE)")
        try PostgresIngestBenchmark.admin(options.postgresURL, "CREATE DATABASE \(database)")
        defer { try? PostgresIngestBenchmark.admin(options.postgresURL, "DROP DATABASE IF EXISTS \(database) WITH (FORCE)") }
        let store = PostgresIngestBenchmark.replacingDatabase(of: options.postgresURL, with: database)
        let server = try ServerProcess(executable: executable, store: store, directory: directory)
        defer { server.stop() }
        log.write("serve on a new database, port \(server.port); posting a fleet of \(fleetDevices) devices\n")
        let fleet = try HTTPConnection(port: server.port)
        let fleetBody = Array(fleetTrace().utf8)
        let posted = try fleetBody.withUnsafeBytes { try fleet.request("POST /v1/events", headers: "Content-Type: text/csv\r\n", body: $0) }
        guard posted.status == 200 else {
            throw ServeBenchmark.Failure(description: "the fleet's POST answered \(posted.status): \(String(decoding: posted.body, as: UTF8.self))")
        }

        let drill = Drill()
        let at = fleetStart + Double(fleetDays) * 86_400 + 3600
        let port = server.port
        let clients = options.clients
        let load = Thread {
            Threads.run(count: clients + 1) { i in
                if i == clients { post(port: port, drill: drill) } else { askPlans(port: port, client: i, at: at, drill: drill) }
            }
        }
        load.start()
        sleepSeconds(options.secondsBefore)
        log.write("restarting the database: \(options.restartCommand)\n")
        let run = ChildProcess.shell(options.restartCommand)
        let back = WallClock.monotonic()
        drill.restartEnded(at: back)
        // Until a plan answers 200 after the database's return, then the load goes on a little.
        while drill.recovery() == nil, WallClock.monotonic() - back < 60 { usleep(50_000) }
        sleepSeconds(options.secondsAfter)
        drill.stop()
        while !drill.allStopped(clients: clients + 1) { usleep(20_000) }

        var result = drill.result()
        result.commandStatus = run.status
        result.commandSeconds = run.seconds
        result.serverAlive = kill(server.pid, 0) == 0 && waitpid(server.pid, nil, WNOHANG) == 0
        // Every acknowledged POST's rows, read back from the database.
        let stored = try storedRows(store: store, directory: directory)
        result.lostAcknowledged = drill.acknowledgedDevices().filter { (stored[$0] ?? 0) < postRows }
        return result
    }

    /// The fleet: each device opens `news` at 08:00 and `chat` at 13:00 and 20:00 every day.
    static func fleetTrace() -> String {
        var text = "time,device,app,event,result,bytes,duration_ms\n"
        for day in 0..<fleetDays {
            for (hour, app) in [(8, "news"), (13, "chat"), (20, "chat")] {
                for d in 0..<fleetDevices {
                    let t = fleetStart + Double(day) * 86_400 + Double(hour) * 3600 + Double(d) * 60
                    text += "\(iso(t)),dev-\(d),\(app),launch,,,\n"
                }
            }
        }
        return text
    }

    /// One POST's body: `postRows` launches of its own device.
    static func postBody(_ i: Int) -> String {
        var text = "time,device,app,event,result,bytes,duration_ms\n"
        for r in 0..<postRows { text += "\(iso(fleetStart + Double(r) * 3600)),poster-\(i),news,launch,,,\n" }
        return text
    }

    static func iso(_ t: Double) -> String { Timestamp.format(micros: Int64(t) * 1_000_000, utcOffsetSeconds: 0) }

    /// Asks for the fleet's plans one after another until stopped, reconnecting after a failure.
    static func askPlans(port: Int, client: Int, at: Double, drill: Drill) {
        var connection: HTTPConnection?
        var i = client
        while !drill.stopping {
            i += 1
            let started = WallClock.monotonic()
            do {
                if connection == nil { connection = try HTTPConnection(port: port) }
                let r = try connection!.request("GET /v1/devices/dev-\(i % fleetDevices)/plan?at=\(iso(at))")
                drill.answered(plan: true, status: r.status, retryAfter: connection!.retryAfter, at: started)
            } catch {
                connection = nil
                drill.answered(plan: true, status: 0, retryAfter: nil, at: started)
                usleep(20_000)
            }
        }
        drill.stopped()
    }

    /// Posts one small body after another, each of a device of its own, until stopped.
    static func post(port: Int, drill: Drill) {
        var connection: HTTPConnection?
        var i = 0
        while !drill.stopping {
            i += 1
            let body = Array(postBody(i).utf8)
            let started = WallClock.monotonic()
            do {
                if connection == nil { connection = try HTTPConnection(port: port) }
                let r = try body.withUnsafeBytes { try connection!.request("POST /v1/events", headers: "Content-Type: text/csv\r\n", body: $0) }
                drill.answered(plan: false, status: r.status, retryAfter: connection!.retryAfter, at: started)
                if r.status == 200 { drill.acknowledge("poster-\(i)") }
            } catch {
                // No answer: the POST may or may not be stored; it is not acknowledged.
                connection = nil
                drill.answered(plan: false, status: 0, retryAfter: nil, at: started)
            }
            usleep(20_000)
        }
        drill.stopped()
    }

    /// The poster devices' stored rows, read with psql (not through fetchcast: the check must not
    /// share the code it checks).
    static func storedRows(store: String, directory: String) throws -> [String: Int] {
        let out = directory + "/restart-stored.txt"
        let sql = "SELECT d.name, count(*) FROM event_log e JOIN devices d USING (device_id) WHERE d.name LIKE 'poster-%' GROUP BY d.name"
        let command = "psql -X -q -At -F , \(shellQuoted(store)) -c \(shellQuoted(sql)) > \(shellQuoted(out))"
        guard ChildProcess.shell(command).status == 0 else {
            throw ServeBenchmark.Failure(description: "psql could not read the stored rows back")
        }
        var rows: [String: Int] = [:]
        for line in String(decoding: try ServeBenchmark.readFile(out), as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: ",")
            if fields.count == 2, let n = Int(fields[1]) { rows[String(fields[0])] = n }
        }
        return rows
    }

    static func shellQuoted(_ s: String) -> String {
        "'" + s.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }

    static func sleepSeconds(_ s: Double) { usleep(useconds_t(max(0, s) * 1_000_000)) }

    /// What the load's threads saw, shared between them.
    final class Drill: Sendable {
        private struct State {
            var result = Result()
            var acknowledged: [String] = []
            var restartEnd: Double?
            var stopped = 0
        }
        private let state = Mutex(State())
        private let stopFlag = Atomic<Bool>(false)

        var stopping: Bool { stopFlag.load(ordering: .acquiring) }
        func stop() { stopFlag.store(true, ordering: .releasing) }
        func stopped() { state.withLock { $0.stopped += 1 } }
        func allStopped(clients: Int) -> Bool { state.withLock { $0.stopped >= clients } }
        func restartEnded(at t: Double) { state.withLock { $0.restartEnd = t } }
        func acknowledge(_ device: String) { state.withLock { $0.acknowledged.append(device) } }
        func acknowledgedDevices() -> [String] { state.withLock { $0.acknowledged } }
        func recovery() -> Double? { state.withLock { $0.result.recoverySeconds } }
        func result() -> Result { state.withLock { $0.result } }

        /// One answer (`status` 0: none) to a request started at `started`.
        func answered(plan: Bool, status: Int, retryAfter: String?, at started: Double) {
            state.withLock {
                if plan { $0.result.plans += 1 } else { $0.result.posts += 1 }
                if !plan && status == 200 { $0.result.acknowledged += 1 }
                $0.result.statuses[status, default: 0] += 1
                if status == 503 && retryAfter == nil { $0.result.unavailableWithoutRetryAfter += 1 }
                // The first plan asked after the database's return and answered 200.
                if plan, status == 200, let end = $0.restartEnd, started >= end, $0.result.recoverySeconds == nil {
                    $0.result.recoverySeconds = WallClock.monotonic() - end
                }
            }
        }
    }
}
