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
    /// The last bytes of the line seen so far (its protocol version, once it ended).
    private var tail: [UInt8] = []

    /// Whether the current request's line ended in `HTTP/1.0` (``ConnectionCloseHandler``
    /// closes such a connection after its response unless it asked to be kept alive).
    var isHTTP10: Bool {
        guard lineEnded else { return false }
        let line = tail.last == UInt8(ascii: "\r") ? tail.dropLast() : tail[...]
        return line.count >= 8 && line.suffix(8).elementsEqual("HTTP/1.0".utf8)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !lineEnded {
            let bytes = unwrapInboundIn(data).readableBytesView
            if let end = bytes.firstIndex(of: UInt8(ascii: "\n")) {
                lineLength += end - bytes.startIndex
                remember(bytes[..<end])
                lineEnded = true
            } else {
                lineLength += bytes.count
                remember(bytes[...])
            }
        }
        context.fireChannelRead(data)
    }

    private func remember(_ bytes: ByteBufferView.SubSequence) {
        tail.append(contentsOf: bytes.suffix(9))
        if tail.count > 9 { tail.removeFirst(tail.count - 9) }
    }

    /// A new request starts with the next bytes.
    func restart() {
        lineLength = 0
        lineEnded = false
        tail.removeAll(keepingCapacity: true)
    }
}
