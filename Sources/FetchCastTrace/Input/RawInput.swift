#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file or standard input read in large chunks with `read(2)`, never loaded whole.
///
/// Every byte read is also fed to a SHA-256 as it goes by: the content hash the store keys
/// files by and `run.json` records costs no second pass, wherever the input is read.
package final class RawInput {
    /// The path as given (`-` for standard input).
    package let path: String
    /// The file's size in bytes when it is a regular file, for progress.
    package let size: Int64?
    /// Bytes read so far.
    package private(set) var bytesRead: Int64 = 0
    private var hasher = SHA256()
    private let fd: Int32
    private let ownsDescriptor: Bool

    /// Opens a path; `-` is standard input.
    /// - Throws: ``TraceError`` when the file cannot be opened.
    package init(path: String) throws(TraceError) {
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
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(TraceError) -> Int {
        while true {
            #if canImport(Glibc)
            let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
            #else
            let n = Darwin.read(fd, buffer.baseAddress, buffer.count)
            #endif
            if n >= 0 {
                bytesRead += Int64(n)
                hasher.update(UnsafeRawBufferPointer(start: buffer.baseAddress, count: n))
                return n
            }
            if errno == EINTR { continue }
            let reason = String(cString: strerror(errno))
            throw TraceError(file: path, line: 0, column: 0, problem: .cannotOpen(reason))
        }
    }

    /// The SHA-256 of the bytes read so far as hex (the whole input's once ``read(into:)``
    /// returned 0).
    package var sha256: String { hasher.hexDigest() }

    /// The SHA-256 of a file's bytes, read in chunks.
    /// - Throws: ``TraceError`` when the file cannot be read.
    package static func sha256(ofFile path: String) throws(TraceError) -> String {
        let input = try RawInput(path: path)
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { chunk.deallocate() }
        while try input.read(into: chunk) > 0 {}
        return input.sha256
    }
}
