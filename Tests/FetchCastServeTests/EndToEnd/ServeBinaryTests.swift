import FetchCastTestSupport
@testable import FetchCastStore  // the store's connection, to count rows and check integrity
import FetchCastTrace
import Foundation
import HTTPTypes
import NIOCore
import Testing

/// `fetchcast serve` as shipped: the built binary on a free loopback port, driven over HTTP.
@Suite(.serialized)
struct ServeBinaryTests {
    static var binary: URL { BuiltExecutable.url(named: "fetchcast") ?? URL(fileURLWithPath: ".build/debug/fetchcast") }

    /// A running `fetchcast serve` and the port it printed.
    final class Server {
        let process: Process
        let stderrPath: String
        let port: Int

        init(_ arguments: [String], in fixture: ServeFixture, environment: [String: String] = [:]) throws {
            process = Process()
            process.executableURL = ServeBinaryTests.binary
            process.arguments = ["serve", "--port", "0"] + arguments
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            stderrPath = fixture.directory + "/serve.err"
            _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
            process.standardError = FileHandle(forWritingAtPath: stderrPath)
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            let deadline = Date().addingTimeInterval(120)
            var found: Int?
            while found == nil && Date() < deadline && process.isRunning {
                let text = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
                if let range = text.range(of: "listening on http://127.0.0.1:") {
                    found = Int(text[range.upperBound...].prefix(while: \.isNumber))
                } else {
                    Thread.sleep(forTimeInterval: 0.05)
                }
            }
            guard let found else {
                process.terminate()
                throw ServerDidNotStart(stderr: (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "")
            }
            port = found
        }

        var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

        /// Waits (up to 120 s) until the server holds a request body in its spool file, i.e. a
        /// `POST /v1/events` is in flight; `false` if none was seen (it may have finished).
        /// Sleeps without holding a thread of the tests' cooperative pool: the `POST` it waits for
        /// is a task on that pool (2 threads on 2 cores). Blocking there, two such waits at once
        /// (this suite's and PostgresServeTests') starved both `POST`s for the whole 120 s.
        func waitForIngestInFlight(spool marker: String = ".sqlite-body-") async -> Bool {
            let deadline = Date().addingTimeInterval(120)
            let fds = "/proc/\(process.processIdentifier)/fd"
            while Date() < deadline && process.isRunning {
                for fd in (try? FileManager.default.contentsOfDirectory(atPath: fds)) ?? [] {
                    if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: fds + "/" + fd), target.contains(marker) {
                        return true
                    }
                }
                try? await Task.sleep(for: .milliseconds(5))
            }
            return false
        }

        /// Sends SIGKILL (`kill -9`) and waits.
        func kill9() {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }

        /// Sends SIGTERM and waits for the exit status.
        func terminate() -> Int32 {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
            return process.terminationStatus
        }

        deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
    }

    struct ServerDidNotStart: Error { var stderr: String }

    static func run(_ arguments: [String]) throws -> (status: Int32, stdout: Data, stderr: String) {
        let p = Process()
        p.executableURL = binary
        p.arguments = arguments
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, o, String(decoding: e, as: UTF8.self))
    }

    @Test func servesWhatPredictPrintsAndStopsCleanlyOnSIGTERM() async throws {
        let fixture = try ServeFixture()
        let tokens = try fixture.writeTokens()
        let server = try Server(["--db", fixture.database, "--tokens", tokens], in: fixture)
        let at = "2013-11-24T20:00:01Z"
        let port = server.port
        let posted = try await ServeFixture.request(
            port: port, .post, "/v1/events", headers: ServeFixture.bearer(ServeFixture.ingestToken), body: ByteBuffer(string: ServeFixture.trace()))
        #expect(posted.status == .ok)
        let unauthorized = try await ServeFixture.request(port: port, .get, "/v1/devices/dev-1/plan")
        #expect(unauthorized.status == .unauthorized)
        let plan = try await ServeFixture.request(port: port, .get, "/v1/devices/dev-1/plan?at=\(at)&count=8", headers: ServeFixture.bearer(ServeFixture.readToken))
        #expect(plan.status == .ok)
        let served = try plan.json(PlanBody.self).fetches
        #expect(try plan.json(PlanBody.self).note == nil, "no note beside fetches")
        // Nine days after the last event: an empty plan, and why, in predict's words (issue 39).
        let silent = "2013-12-04T00:00:00Z"
        let empty = try await ServeFixture.request(
            port: port, .get, "/v1/devices/dev-1/plan?at=\(silent)", headers: ServeFixture.bearer(ServeFixture.readToken))
        let emptyPlan = try empty.json(PlanBody.self)
        #expect(empty.status == .ok && emptyPlan.fetches.isEmpty)
        #expect(emptyPlan.note?.hasPrefix("nothing planned for dev-1 in the next 24 hours: the device has been silent for 9 days") == true,
                "\(String(describing: emptyPlan.note))")
        #expect(server.terminate() == 0)
        #expect(server.stderr.contains("listening on http://127.0.0.1:\(server.port)"))

        // The same question to `fetchcast predict`, on the store the server left.
        let predicted = try Self.run(["predict", "--db", fixture.database, "--device", "dev-1", "--at", at, "--count", "8", "--format", "json"])
        #expect(predicted.status == 0, "\(predicted.stderr)")
        let lines = String(decoding: predicted.stdout, as: UTF8.self).split(separator: "\n")
        let expected = try lines.map { try JSONDecoder().decode(PlanBody.Fetch.self, from: Data($0.utf8)) }
        #expect(!expected.isEmpty)
        #expect(served == expected)
        let silentPredict = try Self.run(["predict", "--db", fixture.database, "--device", "dev-1", "--at", silent, "--format", "json"])
        #expect(silentPredict.status == 0 && silentPredict.stdout.isEmpty, "\(silentPredict.stderr)")
        #expect(emptyPlan.note.map { silentPredict.stderr.contains("note: " + $0 + "\n") } == true, "\(silentPredict.stderr)")
    }

    @Test func killDashNineDuringAPostLeavesTheStoreAsBeforeOrCommitted() async throws {
        let fixture = try ServeFixture()
        let tokens = try fixture.writeTokens()
        let server = try Server(["--db", fixture.database, "--tokens", tokens], in: fixture)
        let trace = ServeFixture.trace(devices: (0..<600).map { "k-\($0)" }, days: 14)
        let rows = trace.split(separator: "\n").count - 1
        let port = server.port
        // The POST runs while the server is killed; the client either got a 200 or nothing.
        let post = Task { () -> HTTPResponse.Status? in
            try? await ServeFixture.request(
                port: port, .post, "/v1/events", headers: ServeFixture.bearer(ServeFixture.ingestToken), body: ByteBuffer(string: trace)).status
        }
        let seenOpen = await server.waitForIngestInFlight()
        server.kill9()
        let status = await post.value

        let store = try Store(path: fixture.database, create: false)
        let files = try store.files()
        let events = try store.connection.scalarInt("SELECT count(*) FROM event_log")
        #expect(try store.connection.scalarInt("SELECT count(*) FROM pragma_integrity_check WHERE integrity_check != 'ok'") == 0)
        if status == .ok {
            #expect(files.count == 1 && events == Int64(rows))
        } else {
            // Killed before the commit: nothing at all; or just after it: the whole body.
            #expect((files.isEmpty && events == 0) || (files.count == 1 && events == Int64(rows)), "\(files.count) files, \(events) events")
        }
        // The killed server's spool is beside the store (not in /tmp), and the next server on the
        // store removes it at start.
        func spools() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: fixture.directory).filter { $0.hasPrefix("fetchcast.sqlite-body-") }
        }
        // Killed before the commit, the spool is left; just after it (the 200 not yet sent), it
        // may already be removed (a machine under load can let the whole ingest finish between
        // the spool being seen open and the kill).
        if status != .ok {
            #expect(try files.isEmpty ? spools().count == 1 : spools().count <= 1,
                    "\(files.count) files, status \(status.map { "\($0)" } ?? "none"), spool seen open: \(seenOpen)")
        }
        let next = try Server(["--db", fixture.database, "--tokens", tokens], in: fixture)
        #expect(try spools().isEmpty)
        #expect(next.terminate() == 0)
    }

    @Test func sigtermFinishesTheIngestInFlightThenExits0() async throws {
        let fixture = try ServeFixture()
        let tokens = try fixture.writeTokens()
        let server = try Server(["--db", fixture.database, "--tokens", tokens], in: fixture)
        let trace = ServeFixture.trace(devices: (0..<600).map { "t-\($0)" }, days: 14)
        let port = server.port
        let post = Task { () -> HTTPResponse.Status? in
            try? await ServeFixture.request(
                port: port, .post, "/v1/events", headers: ServeFixture.bearer(ServeFixture.ingestToken), body: ByteBuffer(string: trace)).status
        }
        #expect(await server.waitForIngestInFlight())
        #expect(server.terminate() == 0)
        #expect(await post.value == .ok)
        let store = try Store(path: fixture.database, create: false)
        #expect(try store.files().count == 1)
        #expect(try store.connection.scalarInt("SELECT count(*) FROM event_log") == Int64(trace.split(separator: "\n").count - 1))
    }

    /// A client trickling a large body does not hold a SIGTERM past `--shutdown-grace`: the
    /// upload is cut, its spool removed, nothing stored, and the server exits 0 (it went on for as
    /// long as the client trickled).
    @Test func aTrickledUploadIsCutAfterTheShutdownGrace() async throws {
        let fixture = try ServeFixture()
        let tokens = try fixture.writeTokens()
        let server = try Server(["--db", fixture.database, "--tokens", tokens, "--shutdown-grace", "1"], in: fixture)
        let socket = try RawSocket(port: server.port)
        try socket.send("POST /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(ServeFixture.ingestToken)\r\n"
            + "Content-Length: 21000000\r\n\r\ntime,device,app,event\n")
        let row = String(repeating: "2013-11-11T08:00:00Z,trickle,a,launch\n", count: 100)
        try socket.send(row)
        #expect(await server.waitForIngestInFlight())
        kill(server.process.processIdentifier, SIGTERM)
        // Go on trickling (about 20 KB/s) for up to 120 s: the server must not wait for it.
        let started = Date()
        while server.process.isRunning && Date().timeIntervalSince(started) < 120 {
            try? socket.send(row)
            try await Task.sleep(for: .milliseconds(200))
        }
        let took = Date().timeIntervalSince(started)
        #expect(!server.process.isRunning, "still running \(Int(took)) s after SIGTERM with a 1 s grace")
        server.process.waitUntilExit()
        #expect(server.process.terminationStatus == 0, "\(server.stderr)")
        let spools = try FileManager.default.contentsOfDirectory(atPath: fixture.directory).filter { $0.contains("-body-") }
        #expect(spools.isEmpty, "\(spools)")
        #expect(try Store(path: fixture.database, create: false).files().isEmpty)
    }

    @Test func predictAtNowPlansFromTheClockLikeTheServer() throws {
        let fixture = try ServeFixture()
        let trace = fixture.directory + "/trace.csv"
        try ServeFixture.trace().write(toFile: trace, atomically: true, encoding: .utf8)
        #expect(try Self.run(["ingest", "--db", fixture.database, "--quiet", trace]).status == 0)
        let before = Date().timeIntervalSince1970
        let now = try Self.run(["predict", "--db", fixture.database, "--device", "dev-1", "--at", "now", "--count", "3", "--format", "json"])
        #expect(now.status == 0, "\(now.stderr)")
        let fetches = try String(decoding: now.stdout, as: UTF8.self).split(separator: "\n").map {
            try JSONDecoder().decode(PlanBody.Fetch.self, from: Data($0.utf8))
        }
        // Years after the last event nothing is pending: the scheduler looks again at the next
        // event, and says so.
        #expect(fetches.allSatisfy { $0.fetch_at_unix >= before })
        #expect(fetches.isEmpty && now.stderr.contains("nothing planned for dev-1"), "\(now.stderr)")
        // Without --at, predict plans from the device's last event: history, not now. dev-1 opens
        // news once more on 2013-11-25 at 08:00, and mail (which follows news within minutes
        // every time) is planned at 08:00:01.
        let more = fixture.directory + "/more.csv"
        try "time,device,app,event\n2013-11-25T08:00:00Z,dev-1,com.example.news,launch\n".write(toFile: more, atomically: true, encoding: .utf8)
        #expect(try Self.run(["ingest", "--db", fixture.database, "--quiet", more]).status == 0)
        let history = try Self.run(["predict", "--db", fixture.database, "--device", "dev-1", "--count", "1", "--format", "json"])
        #expect(history.status == 0, "\(history.stderr)")
        let first = try JSONDecoder().decode(PlanBody.Fetch.self, from: history.stdout)
        #expect(first.app == "com.example.mail" && first.fetch_at == "2013-11-25T08:00:01Z", "\(first)")
    }

    @Test func refusesToStartWithoutTokensOrOffLoopback() throws {
        let fixture = try ServeFixture()
        let none = try Self.run(["serve", "--db", fixture.database, "--port", "0"])
        #expect(none.status == 64)
        #expect(none.stderr.contains("--tokens"))
        let open = try Self.run(["serve", "--db", fixture.database, "--port", "0", "--host", "0.0.0.0", "--insecure-no-auth"])
        #expect(open.status == 64)
        #expect(open.stderr.contains("loopback"))
        // A name that merely starts like a loopback address is a name: refused.
        let name = try Self.run(["serve", "--db", fixture.database, "--port", "0", "--host", "127.evil.example", "--insecure-no-auth"])
        #expect(name.status == 64)
        #expect(name.stderr.contains("numeric loopback"), "\(name.stderr)")
    }

    @Test func insecureOnLoopbackServesWithoutTokens() async throws {
        let fixture = try ServeFixture()
        let server = try Server(["--db", fixture.database, "--insecure-no-auth"], in: fixture)
        #expect(try await ServeFixture.request(port: server.port, .get, "/readyz").status == .ok)
        #expect(try await ServeFixture.request(port: server.port, .get, "/v1/devices").status == .ok)
        #expect(server.terminate() == 0)
    }
}
