#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A request body written to a temporary file, so that the ingest reads it the way
/// `fetchcast ingest` reads a file (hash first, then one transaction). Removed by ``remove()``.
final class Spool: @unchecked Sendable {
    // Written by one task at a time: the handler awaits each write before the next.
    let path: String
    private var fd: Int32

    /// Creates an empty file in `directory`.
    init(directory: String) throws {
        var template = Array((directory + "/fetchcast-body-XXXXXX").utf8CString)
        fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            throw APIError(.internalServerError, "cannot create a temporary file in \(directory) for the request body")
        }
        path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// Appends bytes.
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let n = systemWrite(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw APIError(.internalServerError, "cannot write the request body to a temporary file: \(String(cString: strerror(errno)))")
            }
            offset += n
        }
    }

    /// Closes and deletes the file.
    func remove() {
        if fd >= 0 { close(fd); fd = -1 }
        unlink(path)
    }

    deinit { remove() }
}

private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    return Glibc.write(fd, buffer, count)
    #else
    return Darwin.write(fd, buffer, count)
    #endif
}
