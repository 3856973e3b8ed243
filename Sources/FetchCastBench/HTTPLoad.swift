#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A blocking HTTP/1.1 keep-alive connection to 127.0.0.1, enough to load `fetchcast serve`:
/// one request at a time, `Content-Length` and chunked bodies. For benchmarks only.
final class HTTPConnection {
    private let fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    private var chunk = [UInt8](repeating: 0, count: 65536)
    /// The `Retry-After` header of the latest response, `nil` without one.
    private(set) var retryAfter: String?

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Connects to `127.0.0.1:port`.
    init(port: Int) throws {
        fd = try Self.connect(port: port)
    }

    /// A blocking TCP socket connected to `127.0.0.1:port`, with Nagle's delay off.
    static func connect(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { systemConnect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else {
            close(fd)
            throw Failure(description: "connect to 127.0.0.1:\(port): \(String(cString: strerror(errno)))")
        }
        return fd
    }

    deinit { close(fd) }

    /// Sends a request and reads the whole response.
    /// - Parameters:
    ///   - head: Method and target, e.g. `GET /healthz`.
    ///   - headers: Extra header lines, each ending in `\r\n`.
    ///   - body: A request body sent with `Content-Length`.
    /// - Returns: The status and the body bytes (de-chunked).
    func request(_ head: String, headers: String = "", body: UnsafeRawBufferPointer? = nil) throws -> (status: Int, body: [UInt8]) {
        var text = "\(head) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(headers)"
        if let body { text += "Content-Length: \(body.count)\r\n" }
        text += "\r\n"
        try send(Array(text.utf8).withUnsafeBytes { $0 })
        if let body { try send(body) }
        // Status line and headers.
        var headerEnd: Int?
        while headerEnd == nil {
            headerEnd = find([13, 10, 13, 10])
            if headerEnd == nil { try fill() }
        }
        let headerText = String(decoding: buffer[start..<headerEnd!], as: UTF8.self)
        start = headerEnd! + 4
        let lines = headerText.split(separator: "\r\n")
        guard let first = lines.first, first.count >= 12, let status = Int(first.dropFirst(9).prefix(3)) else {
            throw Failure(description: "bad status line")
        }
        var length: Int?
        var chunked = false
        retryAfter = nil
        for line in lines.dropFirst() {
            let lower = line.lowercased()
            if lower.hasPrefix("retry-after:") { retryAfter = lower.dropFirst(12).trimmingCharacters(in: " ") }
            if lower.hasPrefix("content-length:") { length = Int(lower.dropFirst(15).trimmingCharacters(in: " ")) }
            if lower.hasPrefix("transfer-encoding:") && lower.contains("chunked") { chunked = true }
        }
        var out: [UInt8] = []
        if chunked {
            while true {
                var lineEnd = find([13, 10])
                while lineEnd == nil { try fill(); lineEnd = find([13, 10]) }
                let sizeText = String(decoding: buffer[start..<lineEnd!], as: UTF8.self)
                start = lineEnd! + 2
                guard let size = Int(sizeText.split(separator: ";").first.map(String.init) ?? "", radix: 16) else {
                    throw Failure(description: "bad chunk size")
                }
                while buffer.count - start < size + 2 { try fill() }
                out.append(contentsOf: buffer[start..<(start + size)])
                start += size + 2
                if size == 0 { break }
            }
        } else {
            let n = length ?? 0
            while buffer.count - start < n { try fill() }
            out.append(contentsOf: buffer[start..<(start + n)])
            start += n
        }
        buffer.removeFirst(start)
        start = 0
        return (status, out)
    }

    private func send(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let n = systemSend(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "send: \(String(cString: strerror(errno)))")
            }
            offset += n
        }
    }

    private func fill() throws {
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                buffer.append(contentsOf: chunk[0..<n])
                return
            }
            if n < 0 && errno == EINTR { continue }
            throw Failure(description: n == 0 ? "the server closed the connection" : "recv: \(String(cString: strerror(errno)))")
        }
    }

    private func find(_ pattern: [UInt8]) -> Int? {
        guard buffer.count - start >= pattern.count else { return nil }
        var i = start
        while i <= buffer.count - pattern.count {
            if buffer[i] == pattern[0] {
                var match = true
                for j in 1..<pattern.count where buffer[i + j] != pattern[j] { match = false; break }
                if match { return i }
            }
            i += 1
        }
        return nil
    }
}

func systemSend(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int, _ flags: Int32) -> Int {
    #if canImport(Glibc)
    return Glibc.send(fd, bytes, count, flags)
    #else
    return Darwin.send(fd, bytes, count, flags)
    #endif
}

private func systemConnect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    #if canImport(Glibc)
    return Glibc.connect(fd, address, length)
    #else
    return Darwin.connect(fd, address, length)
    #endif
}

extension StringProtocol {
    fileprivate func trimmingCharacters(in set: Character) -> String {
        String(drop(while: { $0 == set }).reversed().drop(while: { $0 == set }).reversed())
    }
}
