#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// New temporary files and directories with names no other process can take (`mkstemp`,
/// `mkdtemp`): the one place FetchCast makes them (the replay's spool and `--detail` scratch,
/// `serve`'s request bodies and their directory, `bench`'s work directory).
package enum TemporaryPath {
    /// Why a temporary file or directory could not be made: the system's error.
    package struct Failure: Error, Sendable, Hashable {
        /// `errno`.
        package var code: Int32
        /// The system's words for it ("Permission denied").
        package var reason: String { String(cString: strerror(code)) }
    }

    /// Where temporary files go: `$TMPDIR` when it is set and not empty, else `/tmp`.
    package static var directory: String {
        if let t = getenv("TMPDIR"), t.pointee != 0 { return String(cString: t) }
        return "/tmp"
    }

    /// Creates and opens (read-write, mode 0600, not inherited by child processes) a new file in
    /// `directory` named `prefix` and 6 characters of the system's choosing.
    /// - Returns: Its descriptor, which the caller closes, and its path.
    package static func makeFile(in directory: String, prefix: String) throws(Failure) -> (fd: Int32, path: String) {
        var template = Array((directory + "/" + prefix + "XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw Failure(code: errno) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        return (fd, template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
    }

    /// Creates a new directory (mode 0700) in `directory` named `prefix` and 6 characters of
    /// the system's choosing; returns its path.
    package static func makeDirectory(in directory: String, prefix: String) throws(Failure) -> String {
        var template = Array((directory + "/" + prefix + "XXXXXX").utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else { throw Failure(code: errno) }
        return template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
