#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file or standard input read in large chunks with `read(2)`, never loaded whole.
public final class RawInput {
    /// The path as given (`-` for standard input).
    public let path: String
    /// The file's size in bytes when it is a regular file, for progress.
    public let size: Int64?
    /// Bytes read so far.
    public private(set) var bytesRead: Int64 = 0
    private let fd: Int32
    private let ownsDescriptor: Bool

    /// Opens a path; `-` is standard input.
    /// - Throws: ``TraceError`` when the file cannot be opened.
    public init(path: String) throws(TraceError) {
        self.path = path
        if path == "-" {
            fd = 0
            ownsDescriptor = false
        } else {
            fd = open(path, O_RDONLY)
            guard fd >= 0 else {
                let reason = String(cString: strerror(errno))
                throw TraceError(file: path, line: 0, column: 0, problem: .cannotOpen(reason))
            }
            ownsDescriptor = true
        }
        var st = stat()
        if fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG {
            size = Int64(st.st_size)
        } else {
            size = nil
        }
        if (st.st_mode & S_IFMT) == S_IFDIR {
            if ownsDescriptor { close(fd) }
            throw TraceError(file: path, line: 0, column: 0, problem: .cannotOpen("it is a directory"))
        }
    }

    deinit {
        if ownsDescriptor { close(fd) }
    }

    /// Reads up to `buffer.count` bytes; returns 0 at end of input.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(TraceError) -> Int {
        while true {
            #if canImport(Glibc)
            let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
            #else
            let n = Darwin.read(fd, buffer.baseAddress, buffer.count)
            #endif
            if n >= 0 {
                bytesRead += Int64(n)
                return n
            }
            if errno == EINTR { continue }
            let reason = String(cString: strerror(errno))
            throw TraceError(file: path, line: 0, column: 0, problem: .cannotOpen(reason))
        }
    }

    /// The SHA-256 of a regular file's bytes, read in chunks.
    public static func sha256(ofFile path: String) throws(TraceError) -> String {
        let input = try RawInput(path: path)
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { chunk.deallocate() }
        var hasher = SHA256()
        while true {
            let n = try input.read(into: chunk)
            if n == 0 { break }
            hasher.update(UnsafeRawBufferPointer(rebasing: chunk[0..<n]))
        }
        return hasher.hexDigest()
    }
}
