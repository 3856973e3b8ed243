@testable import FetchCastServe
import Foundation
import Hummingbird
import Synchronization
import Testing

/// Reads are bounded in time and shared between devices (issue 27, item 16).
struct ReadFairnessTests {
    @Test func aReadThatWaitedPastItsDeadlineIs503AndDoesNotRun() async throws {
        let fixture = try ServeFixture()
        var configuration = try fixture.configuration()
        configuration.requestDeadline = .zero  // every read has waited longer by the time it starts
        let (app, _) = try await buildApplication(configuration: configuration)
        try await app.test(.live) { client in
            let response = try await client.execute(uri: "/v1/devices", method: .get, headers: ServeFixture.bearer(ServeFixture.readToken))
            #expect(response.status == .serviceUnavailable)
            #expect(response.headers[.retryAfter] == "1")
            #expect(try response.json(ErrorBody.self).error.contains("busy"))
        }
    }

    @Test func oneDeviceReadsOneAtATimeWhileOthersPass() async throws {
        let gate = DeviceGate()
        let log = Log()
        let (release, releasing) = AsyncStream<Void>.makeStream()
        let first = Task {
            try await gate.run("a") {
                log.append("a1 start")
                for await _ in release { break }
                log.append("a1 end")
            }
        }
        while log.entries.isEmpty { try await Task.sleep(for: .milliseconds(1)) }
        let second = Task { try await gate.run("a") { log.append("a2") } }
        // Another device is not held up by "a".
        try await gate.run("b") { log.append("b") }
        try await Task.sleep(for: .milliseconds(100))
        #expect(log.entries == ["a1 start", "b"])  // a2 waits for a1
        releasing.yield()
        try await first.value
        try await second.value
        #expect(log.entries == ["a1 start", "b", "a1 end", "a2"])
    }
}

/// What the gate let run, in order.
private final class Log: Sendable {
    private let lines = Mutex<[String]>([])
    var entries: [String] { lines.withLock { $0 } }
    func append(_ line: String) { lines.withLock { $0.append(line) } }
}
