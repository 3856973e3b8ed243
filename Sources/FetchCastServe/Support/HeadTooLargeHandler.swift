import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Answers a request head over the decoder's limits (``HeadLimits``: a URL or a header field
/// of at most 32 KiB, 48 KiB of URL and headers, 100 fields) with a JSON error: `414` when
/// the request line (the URL) takes at least half of it, else `431`. Hummingbird's HTTP/1.1 channel answers any parse error before a request with an
/// empty `400`; this sits after its codec and answers first, then closes its side of the
/// connection. The decoder reports a long URL and long headers alike, so this adds a
/// ``RequestLineSniffer`` before the codec to measure the line. Errors during a request (a
/// malformed chunk) go on to the route, which answers `400`.
final class HeadTooLargeHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// Whether no request is in flight (the next inbound part is a head).
    private var betweenRequests = true
    /// Whether this handler answered (the connection then only waits for the client to close).
    private var answered = false
    /// Whether the current request's line has ended, from the bytes before the codec.
    private let sniffer: RequestLineSniffer

    /// - Parameter sniffer: The line's measure; this handler adds it before the codec.
    init(sniffer: RequestLineSniffer = RequestLineSniffer()) {
        self.sniffer = sniffer
    }

    func handlerAdded(context: ChannelHandlerContext) {
        try? context.pipeline.syncOperations.addHandler(sniffer, position: .first)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) { betweenRequests = false }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            betweenRequests = true
            sniffer.restart()
        }
        context.write(data, promise: promise)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Once answered, the decoder's later complaints about the rest of the head are moot.
        if answered, error is HTTPParserError { return }
        guard betweenRequests, let parse = error as? HTTPParserError, parse == .headerOverflow else {
            return context.fireErrorCaught(error)
        }
        betweenRequests = false
        answered = true
        // The URL is what is too long when it makes at least half the head allowed.
        let longURL = sniffer.lineLength >= HeadLimits.total / 2
        let body = ByteBuffer(bytes: longURL ? Self.urlBody : Self.body)
        let head = HTTPResponse(status: longURL ? .uriTooLong : .requestHeaderFieldsTooLarge, headerFields: [
            .contentType: "application/json; charset=utf-8", .contentLength: "\(body.readableBytes)", .connection: "close",
        ])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        // Close only the output: a full close with the rest of a long head unread would make
        // the kernel reset the connection, and the client would lose the answer. The client
        // closes once it read the answer (or the idle timeout does).
        // The future completes on the context's event loop, where the context may be used.
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in bound.value.close(mode: .output, promise: nil) }
    }

    private static let urlBody = Array(
        #"{"error":"the request's URL is longer than the server's limit of 32 KiB; send a shorter URL"}"#.utf8)
    private static let body = Array(
        #"{"error":"the request's headers are longer than the server's limit of 48 KiB with the URL (at most 32 KiB a field, 100 fields); send fewer or shorter headers"}"#
            .utf8)
}

/// The limits of a request's head. The URL may take 32 KiB so that the URL of any id the store
/// takes (10,240 bytes, each byte percent-encoded as 3: 30,720) fits, in a plan's path or in a
/// page's `after` cursor: with 16 KiB, an id of 5,120 "é" was ingested and then its plan URL
/// and cursor answered `414`. The decoder counts the URL as a field.
enum HeadLimits {
    /// A field, the URL included.
    static let field = 32 << 10
    /// The URL and every header together.
    static let total = 48 << 10
    /// Header fields.
    static let fields = 100
}
