@testable import FetchCastServe
import HTTPTypes
import Hummingbird
import Testing

/// The serve tests' own client (TestHTTP.swift) answers as the tests assume: each request its
/// own response, in order, when many tasks ask at once, and again after the server closed the
/// connection.
struct TestHTTPTests {
    @Test func manyTasksAtOnceEachGetTheirOwnAnswer() async throws {
        let fixture = try ServeFixture()
        let (app, _) = try await buildApplication(configuration: try fixture.configuration())
        try await app.test(.live) { client in
            // A fresh client: the first requests share its one connect.
            let paths = (0..<24).map { $0 % 3 == 0 ? "/healthz" : $0 % 3 == 1 ? "/readyz" : "/v1/devices" }
            let answers = try await withThrowingTaskGroup(of: (Int, HTTPResponse.Status).self) { group in
                for (i, path) in paths.enumerated() {
                    group.addTask { (i, try await client.execute(uri: path, method: .get).status) }
                }
                return try await group.reduce(into: [Int: HTTPResponse.Status]()) { $0[$1.0] = $1.1 }
            }
            for (i, path) in paths.enumerated() {
                // /v1/devices needs a token: its 401 tells its answer from the others' 200.
                #expect(answers[i] == (path == "/v1/devices" ? .unauthorized : .ok), "\(i) \(path)")
            }
            #expect(client.connectionsOpened == 1)
        }
    }

    @Test func aConnectionTheServerClosedIsOpenedAgain() async throws {
        let fixture = try ServeFixture()
        let (app, _) = try await buildApplication(configuration: try fixture.configuration())
        try await app.test(.live) { client in
            let closing = try await client.execute(uri: "/healthz", method: .get, headers: [.connection: "close"])
            #expect(closing.status == .ok)
            for _ in 0..<3 {
                #expect(try await client.execute(uri: "/readyz", method: .get).status == .ok)
            }
            // The server closed the first connection after its answer; the next three shared one.
            #expect(client.connectionsOpened == 2)
        }
    }
}
