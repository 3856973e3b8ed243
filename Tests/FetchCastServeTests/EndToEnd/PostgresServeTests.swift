import FetchCastTestSupport
import Foundation
import HTTPTypes
import NIOCore
import Synchronization
import Testing

/// Several `fetchcast serve` processes on one PostgreSQL database answer as one server on an
/// SQLite store that took the same requests; a process killed during a `POST` loses nothing and
/// stops none of the others.
@Suite(.serialized, .enabled(if: PostgresTestDatabase.adminURL != nil, Comment(rawValue: PostgresTestDatabase.skipReason)))
struct PostgresServeTests {
    typealias Server = ServeBinaryTests.Server

    /// A plan, a listing or a sweep: the response's status and bytes.
    private func get(_ server: Server, _ uri: String) async throws -> (HTTPResponse.Status, String) {
        do {
            let r = try await ServeFixture.request(port: server.port, .get, uri, headers: ServeFixture.bearer(ServeFixture.readToken))
            return (r.status, String(buffer: r.body))
        } catch {
            Issue.record("GET \(uri) on port \(server.port): \(error); its log: \(server.stderr.suffix(2000))")
            throw error
        }
    }

    private func post(_ server: Server, _ trace: String) async throws -> IngestBody {
        let r = try await ServeFixture.request(
            port: server.port, .post, "/v1/events", headers: ServeFixture.bearer(ServeFixture.ingestToken), body: ByteBuffer(string: trace))
        #expect(r.status == .ok, "\(String(buffer: r.body))")
        return try r.json(IngestBody.self)
    }

    /// What the servers are asked, each answer compared with the SQLite server's.
    /// (`/v1/plans` of every device only when they are few: a debug build takes longer than a
    /// request's deadline to plan hundreds.)
    private func expectSameAnswers(_ servers: [Server], as reference: Server, devices: [String], fewDevices: Bool = true) async throws {
        var uris = ["/v1/devices", "/v1/devices?limit=2", "/v1/plans?from=1385424000&to=1385467200&limit=2"]
        if fewDevices { uris.append("/v1/plans?from=1385424000&to=1385467200") }
        for device in devices {
            uris += ["/v1/devices/\(device)/plan?at=2013-11-24T20:00:01Z", "/v1/devices/\(device)/plan?at=2013-11-25T03:00:00Z&horizon=30",
                     "/v1/devices/\(device)/model"]
        }
        for uri in uris {
            let expected = try await get(reference, uri)
            #expect(expected.0 == .ok, "\(uri): \(expected.1)")
            for server in servers {
                let answer = try await get(server, uri)
                #expect(answer.0 == expected.0 && answer.1 == expected.1, "\(uri) on port \(server.port): \(answer.0) \(answer.1.prefix(300)) against \(expected.0) \(expected.1.prefix(300))")
            }
        }
    }

    /// One request's status, `Retry-After` and body (`nil` when it got no answer).
    private static func ask(_ port: Int, _ method: HTTPRequest.Method, _ uri: String, token: String = ServeFixture.readToken, body: String? = nil)
        async -> (status: HTTPResponse.Status, retryAfter: String?, body: String)?
    {
        guard let r = try? await ServeFixture.request(
            port: port, method, uri, headers: ServeFixture.bearer(token), body: body.map { ByteBuffer(string: $0) })
        else { return nil }
        return (r.status, r.headers[.retryAfter], String(buffer: r.body))
    }

    /// The database goes away under requests (every session of the server ended, none let in,
    /// as in a restart) for a few seconds, then comes back (issue 40): meanwhile every database
    /// route, the request in flight at the loss included, answers 503 with `Retry-After` (never
    /// 500) and `/readyz` 503; within 10 s of its return plans and `/readyz` answer 200 again;
    /// every POST answered 200 is in the database.
    @Test func theServerCarriesOnAcrossTheLossOfItsDatabase() async throws {
        let database = try await PostgresTestDatabase.create()
        defer { Task { await database.drop() } }
        let fixture = try ServeFixture()
        // The password in the URL (libpq's parameter): never in the server's output.
        let password = ProcessInfo.processInfo.environment["PGPASSWORD"] ?? ""
        let server = try Server(["--db", database.url + "?password=" + password, "--tokens", try fixture.writeTokens()], in: fixture)
        _ = try await post(server, ServeFixture.trace(devices: ["dev-1", "dev-2"]))
        let plan = "/v1/devices/dev-1/plan?at=2013-11-24T20:00:01Z"
        let before = try await get(server, plan)
        #expect(before.0 == .ok, "\(before.1)")

        // Bodies posted one after another throughout, each of a device of its own.
        let stop = Flag()
        let away = Flag()
        let acknowledgedCount = Count()
        let port = server.port
        let poster = Task { () -> (acknowledged: [String], statuses: [HTTPResponse.Status]) in
            var acknowledged: [String] = []
            var statuses: [HTTPResponse.Status] = []
            var i = 0
            while !stop.isSet {
                i += 1
                let body = ServeFixture.trace(devices: ["poster-\(i)"], days: 2)
                guard let r = await Self.ask(port, .post, "/v1/events", token: ServeFixture.ingestToken, body: body) else { continue }
                statuses.append(r.status)
                if r.status == .ok, let file = try? JSONDecoder().decode(IngestBody.self, from: Data(r.body.utf8)).file {
                    acknowledged.append(file)
                    acknowledgedCount.add(1)
                }
                try? await Task.sleep(for: .milliseconds(20))
            }
            return (acknowledged, statuses)
        }
        // At least one POST acknowledged before the outage (a loaded machine may take seconds).
        let started = ContinuousClock.now
        while acknowledgedCount.value < 1, ContinuousClock.now - started < .seconds(60) { try await Task.sleep(for: .milliseconds(20)) }

        away.set()
        try await Task.sleep(for: .milliseconds(500))  // a POST in flight finishes first
        try await database.setReachable(false)
        let awayFrom = ContinuousClock.now
        var answersAway: [(String, HTTPResponse.Status, String?)] = []
        while ContinuousClock.now - awayFrom < .seconds(3) {
            for uri in [plan, "/readyz", "/v1/devices"] {
                if let r = await Self.ask(port, .get, uri) { answersAway.append((uri, r.status, r.retryAfter)) }
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        // The first answers may have been read before the sessions ended.
        let late = answersAway.suffix(answersAway.count / 2)
        #expect(!late.isEmpty && late.allSatisfy { $0.1 == .serviceUnavailable && $0.2 == "1" }, "\(answersAway)")
        #expect(answersAway.allSatisfy { $0.1 == .ok || $0.1 == .serviceUnavailable }, "\(answersAway)")

        try await database.setReachable(true)
        let back = ContinuousClock.now
        var planned: Duration?
        var ready: Duration?
        while ContinuousClock.now - back < .seconds(20), planned == nil || ready == nil {
            if planned == nil, let r = await Self.ask(port, .get, plan), r.status == .ok {
                // (Not the same bytes as before: the bodies posted since changed the fleet's prior.)
                #expect(r.body.contains("\"device\":\"dev-1\""), "\(r.body)")
                planned = ContinuousClock.now - back
            }
            if ready == nil, let r = await Self.ask(port, .get, "/readyz"), r.status == .ok { ready = ContinuousClock.now - back }
            try await Task.sleep(for: .milliseconds(50))
        }
        let acknowledgedBefore = acknowledgedCount.value
        away.clear()
        #expect(planned != nil && planned! < .seconds(10), "plans again after \(String(describing: planned))")
        #expect(ready != nil && ready! < .seconds(10), "ready again after \(String(describing: ready))")
        // Posts acknowledged again once it is back: two more, however long a loaded machine takes.
        let resumed = ContinuousClock.now
        while acknowledgedCount.value < acknowledgedBefore + 2, ContinuousClock.now - resumed < .seconds(60) {
            try await Task.sleep(for: .milliseconds(20))
        }
        stop.set()
        let (acknowledged, statuses) = await poster.value

        #expect(!statuses.contains(.internalServerError), "\(statuses)")
        #expect(statuses.last == .ok, "posts again once it is back: \(statuses)")
        let stored = Set(try await database.strings("SELECT sha256 FROM files"))
        #expect(acknowledged.count > 2 && acknowledged.allSatisfy(stored.contains), "\(acknowledged.count) acknowledged, \(stored.count) stored")
        print("database back: plans after \(planned.map { "\($0)" } ?? "-"), ready after \(ready.map { "\($0)" } ?? "-")")
        #expect(server.terminate() == 0, "\(server.stderr.suffix(2000))")
        #expect(!server.stderr.contains("request failed"), "no 500: \(server.stderr.suffix(2000))")
        #expect(password.count < 8 || !server.stderr.contains(password))
    }

    /// The database's sessions end while a large POST streams its `COPY` (issue 40): the POST
    /// answers 503 within seconds (PostgresNIO's `COPY` write can wait for ever on a closed
    /// connection: the COPY ends once the connection's close has completed, its writer never
    /// called after), the server carries on (PostgresNIO stops the process when a `COPY` writes
    /// to a closing connection), nothing of the POST is stored, and the same body posted again
    /// is stored whole.
    @Test func aPostWhoseConnectionIsLostDuringItsCopyAnswers503() async throws {
        // On a machine loaded by the other suites a whole COPY can begin and end between two
        // polls of pg_stat_progress_copy (each a new connection): that attempt's POST is then
        // checked stored whole, and another attempt made, at most three.
        for attempt in 1...3 {
            if try await loseAConnectionDuringItsCopy(attempt: attempt) { return }
        }
        Issue.record("no poll saw the POST's COPY in 3 attempts: the loss during a COPY was never made")
    }

    /// One attempt of ``aPostWhoseConnectionIsLostDuringItsCopyAnswers503()``; `false` when the
    /// POST ended before a poll saw its COPY (its answer and rows checked), so that nothing was lost.
    private func loseAConnectionDuringItsCopy(attempt: Int) async throws -> Bool {
        let database = try await PostgresTestDatabase.create()
        defer { Task { await database.drop() } }
        let fixture = try ServeFixture()
        let server = try Server(["--db", database.url, "--tokens", try fixture.writeTokens()], in: fixture)
        let port = server.port
        // Large enough (84,000 rows) that its COPY lasts longer than a poll of pg_stat_progress_copy
        // (a new connection each) on a machine loaded by the other suites: with 25,200 rows the
        // COPY was once over before a poll saw it.
        let trace = ServeFixture.trace(devices: (0..<2000).map { "k-\($0)" }, days: 14)
        let rows = trace.split(separator: "\n").count - 1
        let posted = Task { await Self.ask(port, .post, "/v1/events", token: ServeFixture.ingestToken, body: trace) }
        let answered = Flag()
        let watcher = Task { _ = await posted.value; answered.set() }
        let watching = ContinuousClock.now
        var copying = false
        while !copying, !answered.isSet, ContinuousClock.now - watching < .seconds(60) {
            // Once rows have reached the server: the loss then meets the COPY's writes (one
            // under way, or the next), not only its start.
            copying = try await database.strings(
                "SELECT count(*)::text FROM pg_stat_progress_copy WHERE datname = current_database() AND bytes_processed > 0")
                != ["0"]
            if !copying { try await Task.sleep(for: .milliseconds(5)) }
        }
        if !copying {
            #expect(answered.isSet, "no COPY seen and the POST not answered within 60 s: \(server.stderr.suffix(2000))")
            guard answered.isSet else {
                server.kill9()
                return true
            }
            let answer = await posted.value
            print("attempt \(attempt): the POST was answered \(String(describing: answer?.status.code)) before a poll saw its COPY")
            #expect(answer?.status == .ok, "\(String(describing: answer))")
            #expect(try await database.strings("SELECT count(*)::text FROM event_log") == [String(rows)], "stored whole")
            #expect(server.terminate() == 0, "\(server.stderr.suffix(1500))")
            return false
        }
        try await database.setReachable(false)
        let lost = ContinuousClock.now
        try await database.setReachable(true)
        // The answer, or none within 20 s (the client would wait 300 s): then the server is
        // killed, which ends the request.
        while !answered.isSet, ContinuousClock.now - lost < .seconds(20) { try await Task.sleep(for: .milliseconds(20)) }
        if !answered.isSet { server.kill9() }
        await watcher.value
        let answer = answered.isSet ? await posted.value.map { ($0.status, $0.retryAfter) } : nil
        let took = ContinuousClock.now - lost
        if answer?.0 == .ok {
            // On a loaded machine the COPY and its commit can end between the poll that saw rows
            // arrive and the end of the sessions (seen once in a clean-clone run): then the POST
            // was stored whole, never in part, and the server carries on.
            print("POST lost during its COPY: its COPY ended before the loss, 200 after \(took)")
            #expect(try await database.strings("SELECT count(*)::text FROM event_log") == [String(rows)], "stored whole")
            #expect(server.process.isRunning && !server.stderr.contains("Fatal error"), "serve ended: \(server.stderr.suffix(2000))")
            #expect(server.terminate() == 0, "\(server.stderr.suffix(1500))")
            return true
        }
        #expect(answer?.0 == .serviceUnavailable && answer?.1 == "1", "\(String(describing: answer)) after \(took)")
        print("POST lost during its COPY: \(String(describing: answer?.0.code)) after \(took)")
        #expect(server.process.isRunning && !server.stderr.contains("Fatal error"), "serve ended: \(server.stderr.suffix(2000))")
        guard answer != nil, server.process.isRunning else { return true }
        #expect(try await database.strings("SELECT count(*)::text FROM event_log") == ["0"], "nothing of the lost POST stored")
        let again = try await post(server, trace)
        #expect(!again.duplicate && again.events == Int64(rows))
        let code = server.terminate()
        // A crash's own line comes before its long backtrace: named first (once seen at shutdown
        // under a loaded clean-clone run, exit 4, its line cut off by the backtrace).
        let fatal = server.stderr.split(separator: "\n").filter { $0.contains("Fatal error") || $0.contains("failure") || $0.contains("Crash") }
        #expect(code == 0, "\(fatal.prefix(5).joined(separator: "\n"))\n…\n\(server.stderr.suffix(1500))")
        return true
    }

    /// A plan whose statement waits on a lock another session holds answers 503 at the
    /// request's deadline (`statement_timeout`), not when the lock is released (issue 40).
    @Test func aPlanHeldUpByALockAnswers503AtItsDeadline() async throws {
        let database = try await PostgresTestDatabase.create()
        defer { Task { await database.drop() } }
        let fixture = try ServeFixture()
        let server = try Server(["--db", database.url, "--tokens", try fixture.writeTokens(), "--request-deadline", "1"], in: fixture)
        let port = server.port
        _ = try await post(server, ServeFixture.trace(devices: ["dev-1", "dev-2"]))
        let plan = "/v1/devices/dev-1/plan?at=2013-11-24T20:00:01Z"
        #expect(try await get(server, plan).0 == .ok)

        let locked = Flag()
        // Held 12 s; each answer is due at its 1 s deadline. The bound below is half the hold, not
        // the deadline: under a loaded test run the first answer has come after 1.9 s and 3.7 s
        // (the process shares 2 cores with the other suites' servers and databases); what the
        // test tells apart is the deadline from the lock's release.
        let holder = Task { try await database.holdingLock(on: ["files", "file_counts"], for: 12) { locked.set() } }
        while !locked.isSet { try await Task.sleep(for: .milliseconds(10)) }
        for uri in [plan, "/v1/devices/dev-2/plan?at=2013-11-25T03:00:00Z&horizon=30", "/v1/devices"] {
            let started = ContinuousClock.now
            let r = await Self.ask(port, .get, uri)
            let took = ContinuousClock.now - started
            #expect(r?.status == .serviceUnavailable && r?.retryAfter == "1", "\(uri): \(String(describing: r))")
            #expect(took < .seconds(6), "\(uri) answered after \(took), the lock is held 12 s")
            print("\(uri) under a lock: \(r?.status.code ?? 0) after \(took)")
        }
        try await holder.value
        #expect(try await get(server, plan).0 == .ok, "answers again once the lock is released")
        #expect(server.terminate() == 0, "\(server.stderr.suffix(2000))")
    }

    @Test func twoServersOnOneDatabaseAnswerAsOneSQLiteServer() async throws {
        let database = try await PostgresTestDatabase.create()
        defer { Task { await database.drop() } }
        let (fa, fb, fc) = (try ServeFixture(), try ServeFixture(), try ServeFixture())
        let tokens = try fa.writeTokens()
        let a = try Server(["--db", database.url, "--tokens", tokens], in: fa)
        let b = try Server(["--db", database.url, "--tokens", tokens], in: fb)
        let sqlite = try Server(["--db", fc.database, "--tokens", tokens], in: fc)

        let first = ServeFixture.trace(devices: ["dev-1", "dev-2", "dev-3"])
        let added = try await post(a, first)
        #expect(added.events > 0)
        #expect(try await post(sqlite, first).events == added.events)
        // The events posted to one process are in the other's answers.
        try await expectSameAnswers([a, b], as: sqlite, devices: ["dev-1", "dev-2", "dev-3"])

        // The first body's rows again, and three later ones: both engines skip the rows they hold.
        let second = first + "1385362800,dev-1,news,launch,,,\n1385362900,dev-4,mail,launch,,,\n1385363000,dev-4,news,launch,,,\n"
        let (onPostgres, onSQLite) = (try await post(b, second), try await post(sqlite, second))
        #expect(onPostgres.events == 3 && onSQLite.events == 3)
        #expect(onPostgres.duplicates == added.events && onSQLite.duplicates == added.events)
        try await expectSameAnswers([a, b], as: sqlite, devices: ["dev-1", "dev-4"])
        // The same bytes again, to the other process: a duplicate there too.
        #expect(try await post(a, second).duplicate)

        // A process started now loads the plans kept ahead into its memory once the warm-up is
        // complete, and answers first plans from there, as the SQLite server does.
        let fd = try ServeFixture()
        let c = try Server(["--db", database.url, "--tokens", tokens], in: fd)
        let deadline = ContinuousClock.now + .seconds(60)
        while !c.stderr.contains("plans kept ahead loaded into memory"), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(c.stderr.contains("plans kept ahead loaded into memory"), "\(c.stderr.suffix(2000))")
        for device in ["dev-1", "dev-4"] {
            let uri = "/v1/devices/\(device)/plan?at=2013-11-26T00:00:00Z"  // after their last events: kept ahead
            #expect(try await get(c, uri) == (try await get(sqlite, uri)))
        }
        let metrics = try await get(c, "/metrics").1
        let count = { (name: String) in metrics.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Int($0.split(separator: " ")[1]) } }
        #expect(count("fetchcast_plans_preloaded_total") == 4, "\(metrics)")
        #expect(count("fetchcast_plans_from_memory_total") == 2, "the first plans of dev-1 and dev-4 from memory")
        try await expectSameAnswers([c], as: sqlite, devices: ["dev-1", "dev-4"])
        for server in [a, b, c, sqlite] { #expect(server.terminate() == 0, "\(server.stderr)") }
    }

    @Test func aServerKilledDuringAPostLosesNothingAndTheOthersCarryOn() async throws {
        let database = try await PostgresTestDatabase.create()
        defer { Task { await database.drop() } }
        let (fa, fb, fc) = (try ServeFixture(), try ServeFixture(), try ServeFixture())
        let tokens = try fa.writeTokens()
        // a spools its bodies in a directory of its own under this TMPDIR.
        let spools = fa.directory + "/tmp"
        try FileManager.default.createDirectory(atPath: spools, withIntermediateDirectories: false)
        let spoolDirectories = { (try FileManager.default.contentsOfDirectory(atPath: spools)).filter { $0.hasPrefix("fetchcast-spool-") } }
        // Answers are compared, not timed: a deadline a loaded machine cannot miss (a sweep on a
        // debug build beside 600 devices' warm-up once took more than the default 10 s).
        let slow = ["--request-deadline", "120"]
        var a = try Server(["--db", database.url, "--tokens", tokens] + slow, in: fa, environment: ["TMPDIR": spools])
        let b = try Server(["--db", database.url, "--tokens", tokens] + slow, in: fb)
        let sqlite = try Server(["--db", fc.database, "--tokens", tokens] + slow, in: fc)
        let trace = ServeFixture.trace(devices: (0..<600).map { "k-\($0)" }, days: 14)
        let rows = trace.split(separator: "\n").count - 1
        let port = a.port
        let killed = Task { () -> HTTPResponse.Status? in
            try? await ServeFixture.request(
                port: port, .post, "/v1/events", headers: ServeFixture.bearer(ServeFixture.ingestToken), body: ByteBuffer(string: trace)).status
        }
        _ = await a.waitForIngestInFlight(spool: "-body-")
        a.kill9()
        let status = await killed.value
        // Before the commit: nothing of the body; after it: all of it.
        let files = Int(try await database.strings("SELECT count(*)::text FROM files").first ?? "") ?? -1
        let events = Int(try await database.strings("SELECT count(*)::text FROM event_log").first ?? "") ?? -1
        #expect((files == 0 && events == 0 && status != .ok) || (files == 1 && events == rows), "\(files) files, \(events) events, \(String(describing: status))")

        // The other process carries on: the body again is taken, or known.
        let again: IngestBody
        do {
            again = try await post(b, trace)
        } catch {
            Issue.record("POST to the other process: \(error); its log: \(b.stderr)")
            throw error
        }
        #expect(again.duplicate == (files == 1))
        #expect(try await database.strings("SELECT count(*)::text FROM event_log") == ["\(rows)"])
        do {
            _ = try await post(sqlite, trace)
        } catch {
            Issue.record("POST to the SQLite server: \(error); its log: \(sqlite.stderr.suffix(2000))")
            throw error
        }
        try await expectSameAnswers([b], as: sqlite, devices: ["k-0", "k-599"], fewDevices: false)
        // The killed process left its spool directory, with the body it held when killed
        // before the commit; a restarted one removes it, catches up and answers alike.
        let left = try spoolDirectories()
        #expect(left.count == 1)
        a = try Server(["--db", database.url, "--tokens", tokens] + slow, in: fa, environment: ["TMPDIR": spools])
        let now = try spoolDirectories()
        #expect(now.count == 1 && now != left, "the killed server's directory removed: \(left) then \(now)")
        try await expectSameAnswers([a], as: sqlite, devices: ["k-0", "k-17"], fewDevices: false)
        for server in [a, b, sqlite] { #expect(server.terminate() == 0, "\(server.stderr)") }
        #expect(try spoolDirectories().isEmpty, "a graceful stop removes its own")
    }
}

/// A count raised by one task, read from others.
private final class Count: Sendable {
    private let atomic = Atomic<Int>(0)
    var value: Int { atomic.load(ordering: .relaxed) }
    func add(_ n: Int) { atomic.add(n, ordering: .relaxed) }
}

/// A flag set once, read from other tasks.
private final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .relaxed) }
    func set() { value.store(true, ordering: .relaxed) }
    func clear() { value.store(false, ordering: .relaxed) }
}
