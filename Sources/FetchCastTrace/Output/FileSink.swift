#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A buffered byte sink on a file descriptor; the library writes through this (or any
/// `TextOutputStream`) and never calls `print`.
public final class FileSink: TextOutputStream {
    /// The path, or `-` for standard output.
    public let path: String
    private let fd: Int32
    private let owns: Bool
    private var buffer: [UInt8] = []
    private let limit: Int
    /// Whether a write failed; `errno` of the failure (EPIPE for a closed pipe).
    public private(set) var failure: Int32?

    /// Standard output (buffered; flushed on ``flush()`` and when released).
    public static func standardOutput() -> FileSink { FileSink(fd: 1, path: "-", limit: 1 << 16) }
    /// Standard error (written at once).
    public static func standardError() -> FileSink { FileSink(fd: 2, path: "/dev/stderr", limit: 0) }

    private init(fd: Int32, path: String, limit: Int) {
        self.fd = fd
        self.path = path
        self.owns = false
        self.limit = limit
    }

    /// Creates (truncates) a file for writing; `-` is standard output.
    /// - Throws: ``TraceError`` with `.cannotWrite` when the file cannot be created.
    public init(path: String) throws(TraceError) {
        self.path = path
        limit = 1 << 16
        if path == "-" {
            fd = 1
            owns = false
            return
        }
        let flags = O_WRONLY | O_CREAT | O_TRUNC
        let opened = open(path, flags, 0o644)
        guard opened >= 0 else {
            throw TraceError(file: path, line: 0, column: 0, problem: .cannotWrite(String(cString: strerror(errno))))
        }
        fd = opened
        owns = true
    }

    deinit {
        flush()
        if owns { close(fd) }
    }

    /// Writes a string.
    public func write(_ string: String) {
        buffer.append(contentsOf: string.utf8)
        if buffer.count > limit { flush() }
    }

    /// Writes bytes.
    public func write(bytes: UnsafeRawBufferPointer) {
        buffer.append(contentsOf: bytes)
        if buffer.count > limit { flush() }
    }

    /// Writes buffered bytes; returns false when a write failed (disk full, closed pipe).
    @discardableResult
    public func flush() -> Bool {
        if failure != nil { buffer.removeAll(); return false }
        var offset = 0
        while offset < buffer.count {
            let n = buffer.withUnsafeBytes { raw in
                #if canImport(Glibc)
                Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                #else
                Darwin.write(fd, raw.baseAddress! + offset, raw.count - offset)
                #endif
            }
            if n < 0 {
                if errno == EINTR { continue }
                failure = errno
                break
            }
            offset += n
        }
        buffer.removeAll(keepingCapacity: true)
        return failure == nil
    }

    /// Whether the stream is a terminal.
    public var isTerminal: Bool { isatty(fd) != 0 }
}
