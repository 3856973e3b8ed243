import FetchCastCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An output that was refused, or could not be written in full.
public struct OutputError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The output's path as given (`-` for standard output).
    public var path: String
    /// What went wrong, as a sentence naming what to do.
    public var reason: String
    /// `errno` of the failed call, when one failed (`EPIPE`: the reader closed the pipe).
    public var code: Int32?

    /// Creates an error.
    public init(path: String, reason: String, code: Int32? = nil) {
        self.path = path
        self.reason = reason
        self.code = code
    }

    /// A write to `path` failed with `errno` `code`.
    static func cannotWrite(_ path: String, code: Int32) -> OutputError {
        OutputError(path: path, reason: String(cString: strerror(code)), code: code)
    }

    /// Whether the reader of standard output went away (`| head`): not a failure to report.
    public var isClosedPipe: Bool { code == EPIPE }

    /// `could not write standard output: No space left on device`, or `could not write FILE: …`.
    public var description: String {
        let name = path == "-" ? "standard output" : path.escapingControlCharacters
        return code == nil ? "\(name): \(reason)" : "could not write \(name): \(reason)"
    }
}
