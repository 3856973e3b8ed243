import NIOCore

/// Watches the bytes of a connection before the HTTP/1.1 decoder, for one fact the decoder does
/// not report: how long the current request's first line is. The decoder reports a URL too long
/// and headers too long alike (a header overflow); ``HeadTooLargeHandler`` asks this which it
/// was, to answer `414` when the line makes most of the head and `431` otherwise.
///
/// The line counts from the start of the connection and again after each response ends
/// (``restart()``): bytes of a pipelined request that arrived before then are not seen again,
/// which can only turn a `414` into a `431`.
final class RequestLineSniffer: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// Bytes of the current request's first line seen so far (up to its line end).
    private(set) var lineLength = 0
    /// Whether its line end arrived.
    private var lineEnded = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !lineEnded {
            let bytes = unwrapInboundIn(data).readableBytesView
            if let end = bytes.firstIndex(of: UInt8(ascii: "\n")) {
                lineLength += end - bytes.startIndex
                lineEnded = true
            } else {
                lineLength += bytes.count
            }
        }
        context.fireChannelRead(data)
    }

    /// A new request starts with the next bytes.
    func restart() {
        lineLength = 0
        lineEnded = false
    }
}
