import FetchCastServe
import FetchCastTrace
import Foundation
import Hummingbird
import NIOCore

/// A fresh temporary directory with a store path and a tokens file; removed when released.
final class ServeFixture: @unchecked Sendable {
    let directory: String
    var database: String { directory + "/fetchcast.sqlite" }

    /// Tokens of each scope, and the tokens file listing their SHA-256.
    static let readToken = "read-token-0123456789"
    static let ingestToken = "ingest-token-0123456789"
    static let adminToken = "admin-token-0123456789"
    static let tokensText = """
        # name scope sha256
        reader read \(SHA256.hex(of: Array(readToken.utf8)))
        writer ingest \(SHA256.hex(of: Array(ingestToken.utf8)))
        root admin \(SHA256.hex(of: Array(adminToken.utf8)))
        """

    init() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("fetchcast-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        directory = base.path
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    /// Writes the tokens file (writable by its owner only, as the server asks); returns its path.
    func writeTokens() throws -> String {
        let path = directory + "/tokens"
        try Self.tokensText.write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        return path
    }

    /// The configuration of a test server: tokens, a 1 MiB body limit, a fixed clock.
    func configuration(
        maxBody: Int = 1 << 20, maxDecodedBody: Int64 = 256 << 20, maxEvents: Int64 = 1_000_000, now: Double = ServeFixture.now
    ) throws -> ServeConfiguration {
        var c = ServeConfiguration(databasePath: database)
        c.port = 0
        c.tokens = try TokenTable(parsing: Self.tokensText, file: "tokens")
        c.maxBody = maxBody
        c.maxDecodedBody = maxDecodedBody
        c.maxEvents = maxEvents
        c.readThreads = 2
        c.spoolDirectory = directory
        // Long: a loaded test process may take a while between connecting and sending.
        c.idleTimeout = .seconds(600)
        c.now = { now }
        return c
    }

    /// 2013-11-24T20:00:01Z: one second after the first device's last launch of news (a plan
    /// then reacts to it: mail follows news within minutes every time).
    static let now: Double = 1_385_323_201

    /// A CSV trace: `devices` devices opening two apps on regular hours for 14 days up to
    /// 2013-11-25, with content published every 2 hours.
    /// Device `i` opens news `i × spacing` seconds after the hour.
    static func trace(devices: [String] = ["dev-1", "dev-2"], days: Int = 14, hours: [Int] = [8, 13, 20], spacing: Int = 60) -> String {
        var rows: [(Int, String)] = []
        let start = 1_384_128_000  // 2013-11-11T00:00:00Z
        for day in 0..<days {
            for hour in stride(from: 0, to: 24, by: 2) {
                let t = start + day * 86_400 + hour * 3600
                rows.append((t, "\(t),,com.example.news,publish,,,"))
            }
            for (i, device) in devices.enumerated() {
                let id = csv(device)
                for hour in hours {
                    let t = start + day * 86_400 + hour * 3600 + i * spacing
                    rows.append((t, "\(t),\(id),com.example.news,launch,,,1200"))
                    rows.append((t + 300, "\(t + 300),\(id),com.example.mail,launch,,,600"))
                }
            }
        }
        // Rows in time order per device (the format asks for it).
        rows.sort { $0.0 < $1.0 }
        return "time,device,app,event,result,bytes,duration_ms\n" + rows.map(\.1).joined(separator: "\n") + "\n"
    }

    static func csv(_ field: String) -> String {
        field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" }) ? "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : field
    }

    static func bearer(_ token: String) -> HTTPFields { [.authorization: "Bearer \(token)"] }

    static func buffer(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }
}

extension ServeFixture {
    /// Clients wait long for an answer: tests of every target share one process, and CPU-bound
    /// ones can hold its few concurrency threads for a minute or more (the answer comes, late).
    static let clientConfiguration = TestClient.Configuration(timeout: .seconds(300))

    /// Runs `body` with a client of its own of the live server `live`.
    static func withClient<T: Sendable>(of live: TestClient, _ body: @escaping @Sendable (TestClient) async throws -> T) async throws -> T {
        try await TestClient.withClient(host: "127.0.0.1", port: live.port!, configuration: clientConfiguration, operation: body)
    }
}

extension ServeFixture {
    /// Sends one request on a new connection to `127.0.0.1:port`, again (up to 3 times) when
    /// the server closed the connection first: under a loaded test process the request may
    /// leave more than the server's 60 s idle timeout after the connection opened. (Every
    /// request of these tests is safe to repeat: ingest is idempotent.)
    static func request(
        port: Int, _ method: HTTPRequest.Method, _ uri: String, headers: HTTPFields = [:], body: ByteBuffer? = nil
    ) async throws -> TestResponse {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await TestClient.withClient(host: "127.0.0.1", port: port, configuration: clientConfiguration) {
                    try await $0.execute(.init(uri, method: method, headers: headers, body: body))
                }
            } catch TestClient.Failure.closed where attempt < 3 {
                continue
            } catch let error as ChannelError where error == .ioOnClosedChannel && attempt < 3 {
                continue
            }
        }
    }
}

extension TestResponse {
    /// The body decoded as JSON.
    func json<T: Decodable>(_ type: T.Type) throws -> T {
        try JSONDecoder().decode(type, from: Data(body.readableBytesView))
    }

    var text: String { String(buffer: body) }
}

/// The JSON bodies the tests read.
struct ErrorBody: Decodable { var error: String; var line: Int?; var column: Int? }
struct IngestBody: Decodable { var events: Int64; var duplicate: Bool; var duplicates: Int64?; var file: String }
struct PlanBody: Decodable {
    struct Fetch: Decodable, Hashable {
        var device: String
        var app: String
        var fetch_at: String
        var fetch_at_unix: Double
        var launch_probability: Double
        var new_data_probability: Double
        var reason: String
        var send_at: String?
        var send_at_unix: Double?
        var pushes_left_this_hour: Int?
    }
    var device: String
    var at_unix: Double
    var fetches: [Fetch]
    var note: String?
}
struct DeviceListBody: Decodable {
    struct Device: Decodable { var device: String; var events: Int64; var first_event: String; var last_event: String }
    var devices: [Device]
    var next: String?
}
