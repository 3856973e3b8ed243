@testable import FetchCastServe
@testable import FetchCastStore
import FetchCastTrace
import Foundation
import Hummingbird
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Limits after decompression, statuses (405, HEAD, 507), ids, query rules, in process.
struct LimitAndStatusTests {
    typealias Client = TestClient

    func withServer(
        maxBody: Int = 1 << 20, maxDecodedBody: Int64 = 256 << 20, maxEvents: Int64 = 1_000_000,
        _ body: @escaping @Sendable (Client, ServeFixture) async throws -> Void
    ) async throws {
        let fixture = try ServeFixture()
        let configuration = try fixture.configuration(maxBody: maxBody, maxDecodedBody: maxDecodedBody, maxEvents: maxEvents)
        let (app, _) = try await buildApplication(configuration: configuration)
        try await app.test(.live) { client in try await body(client, fixture) }
    }

    func post(_ client: Client, _ body: ByteBuffer, token: String = ServeFixture.ingestToken) async throws -> TestResponse {
        try await client.execute(uri: "/v1/events", method: .post, headers: ServeFixture.bearer(token), body: body)
    }

    func gzip(_ text: String, in fixture: ServeFixture) throws -> ByteBuffer {
        let path = fixture.directory + "/body-\(UUID().uuidString).gz"
        let sink = try GzipSink(path: path)
        sink.write(text)
        #expect(sink.finish())
        return ByteBuffer(bytes: try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    func storeIsEmpty(_ fixture: ServeFixture) throws -> Bool {
        let store = try Store(path: fixture.database, create: false)
        return try store.files().isEmpty && store.connection.scalarInt("SELECT count(*) FROM event_log") == 0
    }

    // MARK: Limits after decompression (#18)

    @Test func aGzipBodyOverTheDecodedLimitIs413AndStoresNothing() async throws {
        try await withServer(maxBody: 64 << 10, maxDecodedBody: 64 << 10) { client, fixture in
            // A small gzip of blank lines: far under --max-body, far over the decoded limit.
            let text = ServeFixture.trace(days: 1) + String(repeating: "\n", count: 1 << 20)
            let body = try gzip(text, in: fixture)
            #expect(body.readableBytes < 64 << 10)
            let response = try await post(client, body)
            #expect(response.status == .contentTooLarge)
            #expect(try response.json(ErrorBody.self).error.contains("--max-decoded-body"), "\(response.text)")
            #expect(try storeIsEmpty(fixture))
        }
    }

    @Test func aBodyOverTheRowLimitIs413AndStoresNothing() async throws {
        try await withServer(maxEvents: 50) { client, fixture in
            let trace = ServeFixture.trace(days: 3)
            #expect(trace.split(separator: "\n").count - 1 > 50)
            let response = try await post(client, try gzip(trace, in: fixture))
            #expect(response.status == .contentTooLarge)
            let error = try response.json(ErrorBody.self)
            #expect(error.error.contains("--max-events of 50"), "\(error.error)")
            #expect(error.line == 52)  // the 51st row, after the header
            #expect(try storeIsEmpty(fixture))
            // At the limit it is taken.
            let rows = trace.split(separator: "\n", omittingEmptySubsequences: false).prefix(51).joined(separator: "\n") + "\n"
            #expect(try await post(client, ByteBuffer(string: rows)).status == .ok)
        }
    }

    // MARK: Statuses (#19)

    @Test func aWrongMethodIs405WithAllow() async throws {
        try await withServer { client, _ in
            let admin = ServeFixture.bearer(ServeFixture.adminToken)
            let post = try await client.execute(uri: "/v1/devices", method: .post, headers: admin)
            #expect(post.status == .methodNotAllowed)
            #expect(post.headers[.allow] == "GET, HEAD")
            #expect(try post.json(ErrorBody.self).error.contains("GET"))
            let get = try await client.execute(uri: "/v1/events", method: .get, headers: admin)
            #expect(get.status == .methodNotAllowed)
            #expect(get.headers[.allow] == "POST")
            let delete = try await client.execute(uri: "/v1/devices/dev-1/plan", method: .delete, headers: admin)
            #expect(delete.status == .methodNotAllowed)
            #expect(delete.headers[.allow] == "GET, HEAD")
            // An unknown path stays a 404.
            #expect(try await client.execute(uri: "/v1/nothing", method: .post, headers: admin).status == .notFound)
        }
    }

    @Test func headIsAnsweredLikeGetWithoutABody() async throws {
        try await withServer { client, _ in
            let health = try await client.execute(uri: "/healthz", method: .head)
            #expect(health.status == .ok)
            #expect(health.body.readableBytes == 0)
            #expect(try await client.execute(uri: "/readyz", method: .head).status == .ok)
            #expect(try await client.execute(uri: "/v1/devices", method: .head).status == .unauthorized)
            let devices = try await client.execute(uri: "/v1/devices", method: .head, headers: ServeFixture.bearer(ServeFixture.readToken))
            #expect(devices.status == .ok)
            #expect(devices.body.readableBytes == 0)
        }
    }

    @Test func aFullDiskIs507() {
        let spool = BodySpool.failure(ENOSPC, "cannot write the request body to a temporary file")
        #expect(spool.status.code == 507)
        #expect(spool.message.contains("disk is full"))
        #expect(BodySpool.failure(EIO, "cannot write").status == .internalServerError)
        // SQLite's SQLITE_FULL (13), extended codes included, is what the ingest maps to 507.
        #expect(StoreError(path: "s", message: "full", code: 13).isFull)
        #expect(StoreError(path: "s", message: "full", code: 13 | (1 << 8)).isFull)
        #expect(!StoreError(path: "s", message: "io", code: 10).isFull)
    }

    // MARK: Ids (#20)

    @Test func anIdOverTheAPILimitIsRefusedAtIngestWithItsPlace() async throws {
        try await withServer { client, fixture in
            let long = String(repeating: "d", count: TraceLimits.maxIDBytes + 1)
            let trace = "time,device,app,event\n2013-11-11T08:00:00Z,dev-1,com.example.news,launch\n2013-11-11T08:00:00Z,\(long),com.example.news,launch\n"
            let response = try await post(client, ByteBuffer(string: trace))
            #expect(response.status == .badRequest)
            let error = try response.json(ErrorBody.self)
            #expect(error.line == 3 && error.column == 22, "\(error)")
            #expect(error.error.contains("10240"), "\(error.error)")
            #expect(try storeIsEmpty(fixture))
            // At the limit: stored, and the list's cursor can be followed.
            let a = "a" + String(repeating: "d", count: TraceLimits.maxIDBytes - 1), b = "b" + a.dropFirst()
            let rows = "time,device,app,event\n2013-11-11T08:00:00Z,\(a),x,launch\n2013-11-11T08:00:00Z,\(b),x,launch\n"
            #expect(try await post(client, ByteBuffer(string: rows)).status == .ok)
            let read = ServeFixture.bearer(ServeFixture.readToken)
            let first = try await client.execute(uri: "/v1/devices?limit=1", method: .get, headers: read).json(DeviceListBody.self)
            #expect(first.next == a)
            let second = try await client.execute(uri: "/v1/devices?limit=1&after=\(a)", method: .get, headers: read)
            #expect(second.status == .ok)
            #expect(try second.json(DeviceListBody.self).devices.map(\.device) == [b])
        }
    }

    // MARK: Plans of the past (#17)

    @Test func aSweepOfThePastForManyDevicesIsRefusedSayingHowToAsk() async throws {
        let fixture = try ServeFixture()
        var configuration = try fixture.configuration()
        configuration.maxPastPlanDevices = 2
        let (app, _) = try await buildApplication(configuration: configuration)
        try await app.test(.live) { client in
            #expect(try await post(client, ByteBuffer(string: ServeFixture.trace(devices: ["a", "b", "c"]))).status == .ok)
            let read = ServeFixture.bearer(ServeFixture.readToken)
            // Before every device's last event (2013-11-24): 3 histories to replay, over the limit of 2.
            let past = try await client.execute(uri: "/v1/plans?from=2013-11-20T12:00:00Z&to=2013-11-20T13:00:00Z", method: .get, headers: read)
            #expect(past.status == .badRequest)
            let message = try past.json(ErrorBody.self).error
            #expect(message.contains("3 devices") && message.contains("at most 2") && message.contains("/v1/devices/{device}/plan?at="), "\(message)")
            // After them: planned from the saved schedulers, answered.
            let from = Int(ServeFixture.now) + 86_400
            let future = try await client.execute(uri: "/v1/plans?from=\(from)&to=\(from + 3600)", method: .get, headers: read)
            #expect(future.status == .ok)
        }
    }

    // MARK: Query, auth and body rules (#24)

    @Test(arguments: ["at=2013-11-20T08:00:00", "at=2013-11-20T08:00:00.5", "count=2&count=3", "at=2013-11-20&at=2013-11-21"])
    func anAmbiguousQueryIs400(query: String) async throws {
        try await withServer { client, _ in
            #expect(try await post(client, ByteBuffer(string: ServeFixture.trace(days: 2))).status == .ok)
            let response = try await client.execute(
                uri: "/v1/devices/dev-1/plan?\(query)", method: .get, headers: ServeFixture.bearer(ServeFixture.readToken))
            #expect(response.status == .badRequest)
            let message = try response.json(ErrorBody.self).error
            #expect(message.contains("UTC offset") || message.contains("give it once"), "\(message)")
        }
    }

    /// Bytes that are not UTF-8 in a query parameter are a 400 naming it, as in the path (they
    /// were once replaced by U+FFFD: `after=%C3` answered 200 with nothing, `app=%FF` 404).
    @Test(arguments: [
        ("/v1/devices?after=%C3", "after"), ("/v1/devices/dev-1/plan?app=%FF", "app"),
        ("/v1/devices/dev-1/plan?at=now&x%FE=1", "x%FE"), ("/v1/plans?after=%E2%82", "after"),
    ])
    func aQueryThatIsNotUTF8Is400(uri: String, parameter: String) async throws {
        try await withServer { client, _ in
            #expect(try await post(client, ByteBuffer(string: ServeFixture.trace(days: 2))).status == .ok)
            let response = try await client.execute(uri: uri, method: .get, headers: ServeFixture.bearer(ServeFixture.adminToken))
            #expect(response.status == .badRequest, "\(uri)")
            let message = try response.json(ErrorBody.self).error
            #expect(message.contains("'\(parameter)' is not valid percent-encoded UTF-8"), "\(message)")
        }
    }

    @Test func theBearerSchemeIsCaseInsensitive() async throws {
        try await withServer { client, _ in
            for scheme in ["bearer", "BEARER", "Bearer"] {
                let response = try await client.execute(
                    uri: "/v1/devices", method: .get, headers: [.authorization: "\(scheme) \(ServeFixture.readToken)"])
                #expect(response.status == .ok, "\(scheme)")
            }
            #expect(try await client.execute(uri: "/v1/devices", method: .get, headers: [.authorization: "Basic \(ServeFixture.readToken)"]).status == .unauthorized)
        }
    }

    @Test func aHeaderOnlyBodyAddsNothing() async throws {
        try await withServer { client, fixture in
            let response = try await post(client, ByteBuffer(string: "time,device,app,event\n"))
            #expect(response.status == .ok)
            let outcome = try response.json(IngestBody.self)
            #expect(outcome.events == 0 && !outcome.duplicate)
            #expect(try storeIsEmpty(fixture))
        }
    }

    @Test func theOpenAPIDocumentSaysWhatIdsTheServerTakes() throws {
        let document = try JSONSerialization.jsonObject(with: Data(PackageResources.openapi_json)) as! [String: Any]
        let paths = try #require(document["paths"] as? [String: [String: [String: Any]]])
        var checked = 0
        for (path, operations) in paths {
            for parameter in operations.values.flatMap({ ($0["parameters"] as? [[String: Any]]) ?? [] })
            where ["device", "app", "after"].contains(parameter["name"] as? String) {
                let schema = try #require(parameter["schema"] as? [String: Any])
                let name = "\(path) \(parameter["name"]!)"
                #expect(schema["minLength"] as? Int == 1, "\(name)")
                let pattern = try #require(schema["pattern"] as? String, "\(name)")
                let regex = try NSRegularExpression(pattern: pattern)
                func matches(_ s: String) -> Bool { regex.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)) != nil }
                #expect(matches("dev-1") && matches("emoji-📱") && matches("slash/ed"), "\(name)")
                #expect(!matches("a\u{0}b") && !matches("tab\there") && !matches("del\u{7f}") && !matches(""), "\(name)")
                checked += 1
            }
        }
        #expect(checked == 6)  // device in 3 routes, app in 1, after in 2 (devices, plans)
    }
}
