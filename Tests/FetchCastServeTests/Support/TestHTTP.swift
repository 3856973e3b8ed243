import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOPosix
import ServiceLifecycle
import Synchronization

// The serve tests' HTTP: the application on a real loopback socket and a small HTTP/1.1 client
// of it, in the shape of HummingbirdTesting's `.live` mode. HummingbirdTesting itself depends on
// AsyncHTTPClient (and through it HTTP/2, SOCKS, compression, swift-algorithms, ...), which
// nothing else here needs: a clean clone's test build took 834 s on 2 cores with them and 739 s
// without (issue 41; docs/benchmarks.md). These tests use none of them.

/// How a test reaches the application: on a real loopback socket (port 0).
enum TestingSetup {
    case live
}

extension ApplicationProtocol {
    /// Runs the application on `127.0.0.1`, port 0, and `body` with a client of it; stops the
    /// application (gracefully) when `body` returns or throws.
    func test<T: Sendable>(_ setup: TestingSetup, _ body: @Sendable (TestClient) async throws -> T) async throws -> T {
        let app = LiveApplication(base: self)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            let services = ServiceGroup(configuration: .init(services: [app], logger: app.logger))
            group.addTask {
                do {
                    try await services.run()
                    app.started.fail(TestClient.Failure.serverStopped)
                } catch {
                    app.started.fail(error)
                    throw error
                }
            }
            let port = try await app.started.futureResult.get()
            let client = TestClient(host: "127.0.0.1", port: port, configuration: ServeFixture.clientConfiguration)
            do {
                let value = try await body(client)
                client.shutdown()
                await services.triggerGracefulShutdown()
                return value
            } catch {
                client.shutdown()
                await services.triggerGracefulShutdown()
                throw error
            }
        }
    }
}

/// An application as it is, on `127.0.0.1` port 0, saying which port it got.
private struct LiveApplication<Base: ApplicationProtocol>: ApplicationProtocol, Service {
    typealias Responder = Base.Responder
    let base: Base
    /// The port, once the server listens (a promise completes once: a later failure is ignored).
    let started = MultiThreadedEventLoopGroup.singleton.next().makePromise(of: Int.self)

    var responder: Responder { get async throws { try await base.responder } }
    var server: HTTPServerBuilder { base.server }
    var eventLoopGroup: any EventLoopGroup { base.eventLoopGroup }
    var configuration: ApplicationConfiguration { base.configuration.with(address: .hostname("127.0.0.1", port: 0)) }
    var logger: Logger { base.logger }
    var services: [any Service] { base.services }
    var processesRunBeforeServerStart: [@Sendable () async throws -> Void] { base.processesRunBeforeServerStart }

    @Sendable func onServerRunning(_ channel: any Channel) async {
        await base.onServerRunning(channel)
        if let port = channel.localAddress?.port { started.succeed(port) } else { started.fail(TestClient.Failure.serverStopped) }
    }
}

/// A response: its head and its whole body.
struct TestResponse: Sendable {
    var head: HTTPResponse
    var body: ByteBuffer

    var status: HTTPResponse.Status { head.status }
    var headers: HTTPFields { head.headerFields }
}

/// An HTTP/1.1 client of one server: one keep-alive connection (a new one once the server closed
/// the last), requests sent in the order asked and answered in that order (pipelined when several
/// tasks ask at once), each failing after the configured timeout.
final class TestClient: Sendable {
    struct Configuration: Sendable {
        var timeout: Duration
    }

    struct Request: Sendable {
        var head: HTTPRequest
        var body: ByteBuffer?

        init(_ uri: String, method: HTTPRequest.Method, headers: HTTPFields = [:], body: ByteBuffer? = nil) {
            head = HTTPRequest(method: method, scheme: nil, authority: "127.0.0.1", path: uri, headerFields: headers)
            self.body = body
        }
    }

    typealias Response = TestResponse

    enum Failure: Error {
        /// The server closed the connection before it answered.
        case closed
        /// No answer within the timeout.
        case timedOut
        /// The application stopped before it listened.
        case serverStopped
    }

    let host: String
    let port: Int?
    private let configuration: Configuration
    private let group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    /// The connection, once asked for: tasks that ask at once share one connect.
    private let connection = Mutex<Connection?>(nil)

    /// Connections opened so far.
    var connectionsOpened: Int { opened.load(ordering: .relaxed) }
    private let opened = Atomic(0)

    private enum Connection {
        case connecting(EventLoopFuture<any Channel>)
        case open(any Channel)
    }

    init(host: String, port: Int, configuration: Configuration) {
        self.host = host
        self.port = port
        self.configuration = configuration
    }

    /// Runs `operation` with a new client of `host:port`, closed after it.
    static func withClient<T: Sendable>(
        host: String, port: Int, configuration: Configuration, operation: @Sendable (TestClient) async throws -> T
    ) async throws -> T {
        let client = TestClient(host: host, port: port, configuration: configuration)
        defer { client.shutdown() }
        return try await operation(client)
    }

    /// Closes the connection, if one is open.
    func shutdown() {
        let last = connection.withLock { current in
            defer { current = nil }
            return current
        }
        switch last {
        case .connecting(let future): future.whenSuccess { $0.close(promise: nil) }
        case .open(let channel): channel.close(promise: nil)
        case nil: break
        }
    }

    func execute(uri: String, method: HTTPRequest.Method, headers: HTTPFields = [:], body: ByteBuffer? = nil) async throws -> TestResponse {
        try await execute(Request(uri, method: method, headers: headers, body: body))
    }

    func get(_ uri: String, headers: HTTPFields = [:]) async throws -> TestResponse {
        try await execute(Request(uri, method: .get, headers: headers))
    }

    func post(_ uri: String, headers: HTTPFields = [:], body: ByteBuffer) async throws -> TestResponse {
        try await execute(Request(uri, method: .post, headers: headers, body: body))
    }

    func execute(_ request: Request) async throws -> TestResponse {
        let channel = try await openChannel()
        let answer = channel.eventLoop.makePromise(of: TestResponse.self)
        let timeout = channel.eventLoop.scheduleTask(in: .nanoseconds(Self.nanoseconds(configuration.timeout))) {
            answer.fail(Failure.timedOut)
        }
        answer.futureResult.whenComplete { _ in timeout.cancel() }
        // A connection closed before the request reached the collector fails it here.
        let written = channel.eventLoop.makePromise(of: Void.self)
        written.futureResult.whenFailure { answer.fail($0) }
        channel.writeAndFlush(ResponseCollector.Asked(request: request, answer: answer), promise: written)
        let response = try await answer.futureResult.get()
        // Either side said this was the connection's last exchange: the next request opens another
        // (not this one, which the server may not have closed yet).
        if request.head.headerFields[.connection] == "close" || response.headers[.connection] == "close" {
            connection.withLock { current in
                if case .open(let open) = current, open === channel { current = nil }
            }
        }
        return response
    }

    /// The open connection (or the one being opened), or a new one once the last was closed.
    private func openChannel() async throws -> any Channel {
        guard let port else { throw Failure.closed }
        let future = connection.withLock { current -> EventLoopFuture<any Channel> in
            switch current {
            case .open(let channel) where channel.isActive: return channel.eventLoop.makeSucceededFuture(channel)
            case .connecting(let future): return future
            default:
                let future = ClientBootstrap(group: group)
                    .channelOption(.socketOption(.tcp_nodelay), value: 1)
                    .channelInitializer { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHTTPClientHandlers()
                            try channel.pipeline.syncOperations.addHandlers([HTTP1ToHTTPClientCodec(), ResponseCollector()])
                        }
                    }
                    .connect(host: host, port: port)
                current = .connecting(future)
                opened.add(1, ordering: .relaxed)
                return future
            }
        }
        do {
            let channel = try await future.get()
            connection.withLock { current in
                if case .connecting(let pending) = current, pending === future { current = .open(channel) }
            }
            return channel
        } catch {
            connection.withLock { current in
                if case .connecting(let pending) = current, pending === future { current = nil }
            }
            throw error
        }
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

/// Writes each request asked and completes its promise with the response, in order; fails the
/// ones waiting when the connection closes or fails.
private final class ResponseCollector: ChannelDuplexHandler {
    typealias InboundIn = HTTPResponsePart
    typealias OutboundIn = Asked
    typealias OutboundOut = HTTPRequestPart

    struct Asked: Sendable {
        var request: TestClient.Request
        var answer: EventLoopPromise<TestResponse>
    }

    private var waiting: [EventLoopPromise<TestResponse>] = []
    private var head: HTTPResponse?
    private var body = ByteBuffer()

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let asked = unwrapOutboundIn(data)
        waiting.append(asked.answer)
        var head = asked.request.head
        if let body = asked.request.body {
            head.headerFields[.contentLength] = String(body.readableBytes)
        }
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if let body = asked.request.body { context.write(wrapOutboundOut(.body(body)), promise: nil) }
        context.write(wrapOutboundOut(.end(nil)), promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let response):
            // Interim responses (100 Continue) are not the answer.
            if response.status.kind != .informational {
                head = response
                body.clear()
            }
        case .body(var part):
            body.writeBuffer(&part)
        case .end:
            guard let head, !waiting.isEmpty else { return }
            waiting.removeFirst().succeed(TestResponse(head: head, body: body))
            self.head = nil
            body = ByteBuffer()
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        failWaiting(TestClient.Failure.closed)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        failWaiting(error)
        context.close(promise: nil)
    }

    private func failWaiting(_ error: any Error) {
        let failed = waiting
        waiting = []
        for promise in failed { promise.fail(error) }
    }
}
