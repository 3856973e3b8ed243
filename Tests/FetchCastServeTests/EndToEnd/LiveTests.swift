@testable import FetchCastServe
import FetchCastStore
import FetchCastTrace
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// The application on a real loopback socket (HummingbirdTesting's `.live`, port 0).
struct LiveTests {
    @Test func gzipBodiesAreIngestedAndOversizedOnesRefused() async throws {
        let fixture = try ServeFixture()
        let gz = fixture.directory + "/trace.csv.gz"
        let sink = try GzipSink(path: gz)
        sink.write(ServeFixture.trace(devices: ["g-1"]))
        #expect(sink.finish())
        let bytes = try Data(contentsOf: URL(fileURLWithPath: gz))
        let (app, _) = try buildApplication(configuration: try fixture.configuration(maxBody: 4096))
        try await app.test(.live) { client in
            #expect(client.port != nil)
            var headers = ServeFixture.bearer(ServeFixture.adminToken)
            headers[.contentEncoding] = "gzip"
            let response = try await client.execute(uri: "/v1/events", method: .post, headers: headers, body: ByteBuffer(bytes: bytes))
            #expect(response.status == .ok)
            #expect(try response.json(IngestBody.self).events == 14 * 3 * 2 + 14 * 12)

            let big = ByteBuffer(string: ServeFixture.trace(devices: ["big"]))
            let refused = try await client.execute(uri: "/v1/events", method: .post, headers: ServeFixture.bearer(ServeFixture.adminToken), body: big)
            #expect(refused.status == .contentTooLarge)

            headers[.contentEncoding] = "br"
            let unsupported = try await client.execute(uri: "/v1/events", method: .post, headers: headers, body: ByteBuffer(bytes: bytes))
            #expect(unsupported.status == .unsupportedMediaType)
        }
        let files = try Store(path: fixture.database, create: false).files()
        #expect(files.count == 1)
    }

    @Test func plansAnswerWhileAnIngestRuns() async throws {
        let fixture = try ServeFixture()
        let (app, _) = try buildApplication(configuration: try fixture.configuration(maxBody: 64 << 20))
        try await app.test(.live) { client in
            let admin = ServeFixture.bearer(ServeFixture.adminToken)
            #expect(try await client.execute(uri: "/v1/events", method: .post, headers: admin, body: ByteBuffer(string: ServeFixture.trace())).status == .ok)
            #expect(try await client.execute(uri: "/v1/devices/dev-1/plan", method: .get, headers: admin).status == .ok)
            // A large ingest of other devices, and plans for dev-1 meanwhile: every plan is answered.
            let many = (0..<300).map { "bulk-\($0)" }
            let big = ByteBuffer(string: ServeFixture.trace(devices: many, days: 14))
            async let ingest = client.execute(uri: "/v1/events", method: .post, headers: admin, body: big)
            var answered = 0
            for _ in 0..<5 {
                let plan = try await client.execute(uri: "/v1/devices/dev-1/plan?count=2", method: .get, headers: admin)
                if plan.status == .ok { answered += 1 }
            }
            #expect(answered == 5)
            #expect(try await ingest.status == .ok)
        }
    }
}
