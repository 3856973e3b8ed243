import Foundation
import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Ends a connection after a response that cannot be followed by another request on it:
///
/// - a request in HTTP/1.0 without `Connection: keep-alive` (HTTP/1.0 closes by default);
/// - a `413` (the body it refused was not read, so the bytes that follow are not a request).
///
/// The response gets `Connection: close`, and once it is written the server closes its side of
/// the connection (a half-close: a full close with a refused body still arriving would make the
/// kernel reset the connection, and the client could lose the answer; the client closes once it
/// read it, or the idle timeout does). Before, both kinds stayed open until the idle timeout
/// (60 s). Hummingbird's HTTP/1.1 channel answers every request as HTTP/1.1 keep-alive; this sits
/// after its codec and reads the request line's version from ``RequestLineSniffer``.
final class ConnectionCloseHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let sniffer: RequestLineSniffer
    /// Whether the request being answered asked (or defaulted) to close after its response.
    private var closeAfterRequest = false
    /// Whether the response being written ends the connection.
    private var closing = false

    init(sniffer: RequestLineSniffer) {
        self.sniffer = sniffer
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let request) = unwrapInboundIn(data) {
            let tokens = (request.headerFields[.connection] ?? "").lowercased().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            closeAfterRequest = sniffer.isHTTP10 && !tokens.contains("keep-alive")
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var response) where response.status.code >= 200:
            if closeAfterRequest || response.status == .contentTooLarge {
                closing = true
                response.headerFields[.connection] = "close"
                context.write(wrapOutboundOut(.head(response)), promise: promise)
                return
            }
            context.write(data, promise: promise)
        case .end where closing:
            closing = false
            closeAfterRequest = false
            let written = context.eventLoop.makePromise(of: Void.self)
            // The future completes on the context's event loop, where the context may be used.
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            written.futureResult.whenComplete { _ in bound.value.close(mode: .output, promise: nil) }
            if let promise { written.futureResult.cascade(to: promise) }
            context.writeAndFlush(data, promise: written)
        default:
            context.write(data, promise: promise)
        }
    }
}
