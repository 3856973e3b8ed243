@testable import FetchCastServe
import FetchCastStore
import FetchCastTrace
import Foundation
#if canImport(Glibc)
import Glibc
#endif
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

    @Test func expect100ContinueIsAnsweredBeforeTheBody() async throws {
        let fixture = try ServeFixture()
        let (app, _) = try buildApplication(configuration: try fixture.configuration())
        try await app.test(.live) { client in
            let port = try #require(client.port)
            let body = ServeFixture.trace(days: 1)
            let socket = try RawSocket(port: port)
            try socket.send("POST /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(ServeFixture.ingestToken)\r\n"
                + "Content-Length: \(body.utf8.count)\r\nExpect: 100-continue\r\n\r\n")
            // Without the body sent, the server must already say go on.
            let interim = try socket.receive()
            #expect(interim.hasPrefix("HTTP/1.1 100 Continue"))
            try socket.send(body)
            var final = try socket.receive()
            if !final.contains("HTTP/1.1 200") { final += try socket.receive() }
            #expect(final.contains("HTTP/1.1 200"))
        }
    }

    @Test func anIdleConnectionIsClosed() async throws {
        let fixture = try ServeFixture()
        var configuration = try fixture.configuration()
        configuration.idleTimeout = .seconds(1)
        let (app, _) = try buildApplication(configuration: configuration)
        try await app.test(.live) { client in
            let socket = try RawSocket(port: try #require(client.port))
            // Half a request head, then nothing: the server closes the connection.
            try socket.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            let started = Date()
            #expect(try socket.receiveOrClosed() == nil)
            #expect(Date().timeIntervalSince(started) < 4)
        }
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

/// A blocking TCP connection to 127.0.0.1 with a 5 s receive timeout.
private final class RawSocket {
    let fd: Int32

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else { throw POSIXError(.ECONNREFUSED) }
    }

    deinit { close(fd) }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw POSIXError(.EPIPE) }
            offset += n
        }
    }

    /// The next bytes, or `nil` when the server closed the connection.
    func receiveOrClosed() throws -> String? {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n == 0 { return nil }
        guard n > 0 else { throw POSIXError(.ETIMEDOUT) }
        return String(decoding: buffer[0..<n], as: UTF8.self)
    }

    func receive() throws -> String {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { throw POSIXError(.ETIMEDOUT) }
        return String(decoding: buffer[0..<n], as: UTF8.self)
    }
}
