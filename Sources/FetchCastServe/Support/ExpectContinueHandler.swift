import NIOCore
import HTTPTypes
import NIOHTTPTypes

/// Answers `Expect: 100-continue` with `100 Continue`, so that clients that ask first (curl
/// does for bodies over 1 MiB) send the body at once instead of after their own timeout (1 s
/// for curl). Hummingbird's HTTP/1.1 channel does not; this sits after its codec. A body whose
/// `Content-Length` already exceeds `--max-body` gets no `100 Continue`: the route answers
/// `413` at once, and the client need not send it.
final class ExpectContinueHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundOut = HTTPResponsePart
    let maxBody: Int

    init(maxBody: Int) {
        self.maxBody = maxBody
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let request) = unwrapInboundIn(data),
           request.headerFields[.expect]?.lowercased() == "100-continue",
           (request.headerFields[.contentLength].flatMap { Int($0) } ?? 0) <= maxBody
        {
            context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
        }
        context.fireChannelRead(data)
    }
}
