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
    private var owns: Bool
    /// Whether ``closeFile(keep:)`` closed the descriptor (later bytes are dropped: the number may
    /// name another file by then).
    private var closed = false
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

    /// Writes to a descriptor it owns and closes (``OutputFile``'s temporary file).
    init(owning fd: Int32, path: String) {
        self.fd = fd
        self.path = path
        owns = true
        limit = 1 << 16
    }

    /// Creates (truncates) a file for writing; `-` is standard output. For scratch files only:
    /// outputs a user names go through ``OutputFile``, which never truncates one in place.
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
        closeDescriptor()
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
        if closed { buffer.removeAll(); return true }  // an output already committed or dropped
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

    /// Flushes, syncs the file to the disk (a regular file) and closes it; with `keep` false,
    /// only closes it (an output being dropped).
    /// - Returns: `errno` of the first failure, `nil` when every byte reached the file.
    @discardableResult
    func closeFile(keep: Bool = true) -> Int32? {
        guard keep else {
            buffer.removeAll()
            closeDescriptor()
            return nil
        }
        flush()
        if let failure { closeDescriptor(); return failure }
        var st = stat()
        if fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, fsync(fd) != 0 {
            failure = errno
        }
        if !closeDescriptor(), failure == nil { failure = errno }
        return failure
    }

    @discardableResult
    private func closeDescriptor() -> Bool {
        guard owns else { return true }
        owns = false
        closed = true
        #if canImport(Glibc)
        return Glibc.close(fd) == 0
        #else
        return Darwin.close(fd) == 0
        #endif
    }

    /// Whether the stream is a terminal.
    public var isTerminal: Bool { isatty(fd) != 0 }
}
