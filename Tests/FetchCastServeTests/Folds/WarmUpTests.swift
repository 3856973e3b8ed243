@testable import FetchCastServe
@testable import FetchCastStore  // the store's connection, to count saved rows
import Foundation
import Testing

/// After an ingest is folded, the server saves every changed device's caught-up scheduler in
/// the background (``SchedulerWarmup``), so that a first plan restores it; `--no-warm-up` saves
/// none. (That a restored scheduler answers what replaying the history answers is
/// `SchedulerWarmUpTests`' part.)
struct WarmUpTests {
    private func run(warms: Bool, _ body: @escaping @Sendable (TestClient, Store) async throws -> Void) async throws {
        let fixture = try ServeFixture()
        var configuration = try fixture.configuration()
        configuration.warmsSchedulers = warms
        let (app, _) = try await buildApplication(configuration: configuration)
        try await app.test(.live) { client in
            let posted = try await client.execute(
                uri: "/v1/events", method: .post, headers: ServeFixture.bearer(ServeFixture.ingestToken),
                body: ServeFixture.buffer(ServeFixture.trace(devices: ["dev-1", "dev-2", "dev-3"])))
            #expect(posted.status == .ok)
            try await body(client, try Store(path: fixture.database, create: false))
        }
    }

    private static func count(_ store: Store, _ pattern: String) throws -> Int {
        Int(try store.connection.scalarInt("SELECT count(*) FROM model_state WHERE key LIKE ?", [.text(pattern)]))
    }

    /// Polls `condition` for up to 60 s (the test process may be busy).
    private static func waitUntil(_ condition: () throws -> Bool) async throws -> Bool {
        for _ in 0..<600 {
            if try condition() { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return try condition()
    }

    @Test func everyDevicesSchedulerIsSavedAfterTheFoldAndAChangedOneAgain() async throws {
        try await run(warms: true) { client, store in
            #expect(try await Self.waitUntil { try Self.count(store, "scheduler:%") == 3 && Self.count(store, "plans:%") == 3 && Self.count(store, "warmed-current-5") == 1 })
            let before = try store.modelStateWatermark(key: "warmed-current-5")
            // Every key is the fleet's (no colon) or names one of the three devices (DeviceStateKey):
            // what lets PostgreSQL keep a device's states by device.
            let statement = try store.connection.prepare("SELECT key FROM model_state")
            var keys: [String] = []
            while try statement.step() { keys.append(statement.text(0)) }
            #expect(keys.count >= 10)
            for key in keys { #expect(!key.contains(":") || (DeviceStateKey.device(of: key).map { (1...3).contains($0) } ?? false), "\(key)") }

            // One more launch of dev-2: folded, then its scheduler caught up and saved again.
            let row = "time,device,app,event,result,bytes,duration_ms\n\(Int(ServeFixture.now) + 60),dev-2,com.example.news,launch,,,\n"
            let posted = try await client.execute(
                uri: "/v1/events", method: .post, headers: ServeFixture.bearer(ServeFixture.ingestToken), body: ServeFixture.buffer(row))
            #expect(posted.status == .ok)
            #expect(try await Self.waitUntil { try store.modelStateWatermark(key: "warmed-current-5") != before })
            #expect(try Self.count(store, "scheduler:%") == 3)
            let plan = try await client.execute(
                uri: "/v1/devices/dev-2/plan?at=\(Int(ServeFixture.now) + 61)", method: .get, headers: ServeFixture.bearer(ServeFixture.readToken))
            #expect(plan.status == .ok)
        }
    }

    @Test func withoutWarmUpNoSchedulerIsSaved() async throws {
        try await run(warms: false) { _, store in
            // The fold is saved, and a while after it still no scheduler.
            #expect(try await Self.waitUntil { try store.modelStateWatermark(key: "watermark") == store.lastEventID() })
            try await Task.sleep(for: .milliseconds(500))
            #expect(try Self.count(store, "scheduler:%") == 0)
            #expect(try Self.count(store, "warmed-current-5") == 0)
        }
    }
}
