@testable import FetchCastServe
import FetchCastStore
import Foundation
import Hummingbird
import NIOCore
import Testing

/// What the server answers to requests that break HTTP's limits or framing, on a real socket
/// (the in-process router never sees them).
struct HTTPFramingTests {
    func withLiveServer(_ body: @escaping @Sendable (Int, ServeFixture) async throws -> Void) async throws {
        let fixture = try ServeFixture()
        let (app, _) = try await buildApplication(configuration: try fixture.configuration(maxBody: 4096))
        try await app.test(.live) { client in try await body(try #require(client.port), fixture) }
    }

    /// The status code and the body (after the blank line) of the first answer in `text`.
    func answer(_ text: String) -> (status: Int?, body: String) {
        let status = text.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) }
        let body = text.range(of: "\r\n\r\n").map { String(text[$0.upperBound...]) } ?? ""
        return (status, body)
    }

    @Test func aMalformedChunkedBodyIs400() async throws {
        try await withLiveServer { port, fixture in
            let socket = try RawSocket(port: port)
            try socket.send("POST /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(ServeFixture.ingestToken)\r\n"
                + "Transfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n")
            let (status, body) = answer(try await socket.receiveUntilClosed())
            #expect(status == 400, "\(body)")
            #expect(body.contains("\"error\""))
            #expect(try Store(path: fixture.database, create: false).files().isEmpty)
        }
    }

    @Test(arguments: [("header", 40_000, 431), ("url", 100_000, 414), ("url", 40_000, 414)])
    func anOversizedHeadIs431OrALongURL414WithAJSONError(what: String, size: Int, expected: Int) async throws {
        try await withLiveServer { port, _ in
            let socket = try RawSocket(port: port)
            let long = String(repeating: "a", count: size)
            if what == "header" {
                try socket.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Long: \(long)\r\n\r\n")
            } else {
                try socket.send("GET /healthz?\(long) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            }
            let (status, body) = answer(try await socket.receiveUntilClosed())
            #expect(status == expected, "\(body)")
            let error = try JSONDecoder().decode(ErrorBody.self, from: Data(body.utf8))
            #expect(error.error.contains(what == "url" ? "32 KiB" : "48 KiB"))
            #expect(error.error.contains(what == "url" ? "URL" : "headers"), "\(error.error)")
        }
    }

    /// The line is counted again after each answer: on a kept-alive connection a long URL after
    /// a request is still a `414`, and long headers a `431`.
    @Test(arguments: [("header", 431), ("url", 414)])
    func theSecondRequestOfAConnectionIsToldApartToo(what: String, expected: Int) async throws {
        try await withLiveServer { port, _ in
            let socket = try RawSocket(port: port)
            try socket.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            var first = try await socket.receive()
            while !first.contains("\r\n\r\n") { first += try await socket.receive() }
            #expect(first.hasPrefix("HTTP/1.1 200"))
            let long = String(repeating: "b", count: 40_000)
            if what == "header" {
                try socket.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Long: \(long)\r\n\r\n")
            } else {
                try socket.send("GET /healthz?\(long) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            }
            let rest = try await socket.receiveUntilClosed()
            let second = String(rest[rest.range(of: "HTTP/1.1 4")!.lowerBound...])
            #expect(second.hasPrefix("HTTP/1.1 \(expected)"), "\(second.prefix(200))")
        }
    }

    @Test func aBodyAnnouncedOverTheLimitGets413NotContinue() async throws {
        try await withLiveServer { port, fixture in
            let socket = try RawSocket(port: port)
            try socket.send("POST /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(ServeFixture.ingestToken)\r\n"
                + "Content-Length: 10000000\r\nExpect: 100-continue\r\n\r\n")
            let first = try await socket.receive()
            #expect(first.hasPrefix("HTTP/1.1 413"), "\(first.prefix(80))")
            #expect(!first.contains("100 Continue"))
            #expect(try Store(path: fixture.database, create: false).files().isEmpty)
        }
    }

    @Test func aClientHangingUpIsNotCountedAsAServerError() async throws {
        try await withLiveServer { port, fixture in
            do {
                let socket = try RawSocket(port: port)
                try socket.send("POST /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(ServeFixture.ingestToken)\r\n"
                    + "Content-Length: 4000\r\n\r\ntime,device,app,event\n2013-11-11T08:00:00Z,hang-up,a,launch\n")
            }  // closed here, 3,940 bytes short
            // The metrics registry is the process's: wait for this server's route to be counted.
            let metrics = ServeFixture.bearer(ServeFixture.readToken)
            var lines: [Substring] = []
            for _ in 0..<100 {
                let text = String(buffer: try await ServeFixture.request(port: port, .get, "/metrics", headers: metrics).body)
                lines = text.split(separator: "\n").filter { $0.hasPrefix("hb_requests{http_route=\"/v1/events\",http_request_method=\"POST\"") }
                if lines.contains(where: { $0.contains("\"499\"") }) { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(lines.contains { $0.contains("\"499\"") }, "\(lines)")
            #expect(!lines.contains { $0.contains("\"500\"") }, "\(lines)")
        }
    }
}
