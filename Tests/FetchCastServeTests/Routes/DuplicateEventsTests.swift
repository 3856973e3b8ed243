import FetchCastPredict
@testable import FetchCastServe
import FetchCastStore
import Foundation
import Hummingbird
import Testing

/// `POST /v1/events` skips the events the store already holds (issue 27, item 11).
struct DuplicateEventsTests {
    typealias Client = TestClient

    struct Outcome: Decodable { var events: Int64; var duplicate: Bool; var duplicates: Int64; var file: String }

    func withServer(_ body: @escaping @Sendable (Client, ServeFixture) async throws -> Void) async throws {
        let fixture = try ServeFixture()
        let (app, _) = try await buildApplication(configuration: try fixture.configuration())
        try await app.test(.live) { client in try await body(client, fixture) }
    }

    func post(_ client: Client, _ text: String, query: String = "") async throws -> TestResponse {
        try await client.execute(uri: "/v1/events" + query, method: .post, headers: ServeFixture.bearer(ServeFixture.ingestToken),
                                 body: ServeFixture.buffer(text))
    }

    /// The fixture's trace with its rows in reverse order: other bytes, the same events.
    static func reordered(_ trace: String) -> String {
        var lines = trace.split(separator: "\n").map(String.init)
        let header = lines.removeFirst()
        return ([header] + lines.reversed()).joined(separator: "\n") + "\n"
    }

    static func eventCount(_ fixture: ServeFixture) throws -> Int64 {
        try Store(path: fixture.database, create: false).stats().events
    }

    @Test func theSameEventsAgainAddNothingAndAreCounted() async throws {
        try await withServer { client, fixture in
            let trace = ServeFixture.trace()
            let first = try await post(client, trace)
            #expect(first.status == .ok)
            let added = try first.json(Outcome.self)
            #expect(added.events == 336 && added.duplicates == 0 && !added.duplicate)
            let again = try await post(client, Self.reordered(trace))
            #expect(again.status == .ok)
            let skipped = try again.json(Outcome.self)
            #expect((skipped.events, skipped.duplicates, skipped.duplicate) == (0, 336, false))
            #expect(try Self.eventCount(fixture) == 336)
            // The same bytes again: known by their hash, as before.
            let same = try await post(client, trace).json(Outcome.self)
            #expect((same.events, same.duplicates, same.duplicate) == (0, 0, true))
        }
    }

    @Test func aPartlyNewBodyAddsOnlyItsNewEvents() async throws {
        try await withServer { client, fixture in
            #expect(try await post(client, ServeFixture.trace(days: 7)).status == .ok)
            let more = try await post(client, ServeFixture.trace(days: 14)).json(Outcome.self)
            #expect((more.events, more.duplicates) == (168, 168))
            #expect(try Self.eventCount(fixture) == 336)
        }
    }

    @Test func duplicatesKeepAddsThemAgain() async throws {
        try await withServer { client, fixture in
            let trace = ServeFixture.trace()
            #expect(try await post(client, trace).status == .ok)
            let kept = try await post(client, Self.reordered(trace), query: "?duplicates=keep").json(Outcome.self)
            #expect((kept.events, kept.duplicates) == (336, 0))
            // Each stored event stands for one row: the store holds each twice, the body once.
            let skip = try await post(client, Self.reordered(trace) + "\n", query: "?duplicates=skip").json(Outcome.self)
            #expect((skip.events, skip.duplicates) == (0, 336))
            #expect(try Self.eventCount(fixture) == 672)
        }
    }

    @Test(arguments: ["?duplicates=drop", "?duplicates=", "?duplicates=keep&duplicates=skip"])
    func anUnknownDuplicatesValueIs400(query: String) async throws {
        try await withServer { client, fixture in
            let response = try await post(client, ServeFixture.trace(), query: query)
            #expect(response.status == .badRequest)
            #expect(try response.json(ErrorBody.self).error.contains("duplicates"))
            #expect(try Self.eventCount(fixture) == 0)
        }
    }
}
