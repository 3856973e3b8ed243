import Foundation
import FetchCastTrace

/// A fresh directory under the system temporary directory, removed when released.
package final class TemporaryDirectory {
    /// The directory's path.
    package let path: String

    /// Creates the directory, named `<prefix>-<UUID>`.
    package init(prefix: String = "fetchcast-tests") throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        path = url.path
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Writes bytes to a file in the directory and returns its path.
    @discardableResult
    package func write(_ name: String, bytes: [UInt8]) throws -> String {
        let file = path + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        return file
    }

    /// Writes UTF-8 text to a file in the directory and returns its path.
    @discardableResult
    package func write(_ name: String, _ text: String) throws -> String {
        try write(name, bytes: Array(text.utf8))
    }

    /// Writes text gzip-compressed with the package's own encoder and returns the path.
    @discardableResult
    package func writeGzip(_ name: String, _ text: String) throws -> String {
        let file = path + "/" + name
        let sink = try GzipSink(path: file)
        sink.write(text)
        guard sink.finish() else { throw CocoaError(.fileWriteUnknown) }
        return file
    }

    /// Gzip-compresses bytes with `/bin/gzip -c` (an independent encoder).
    package static func gzip(_ bytes: [UInt8]) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-c", "-n"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        // Small inputs only: write, close, then read.
        input.fileHandleForWriting.write(Data(bytes))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Array(data)
    }
}
