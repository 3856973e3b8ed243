import Foundation

/// An executable product SwiftPM built next to the running test bundle (the test target
/// depends on it): what end-to-end tests run.
package enum BuiltExecutable {
    /// The executable `name` beside the test bundle, `nil` when there is none.
    package static func url(named name: String) -> URL? {
        var starts = [URL(fileURLWithPath: CommandLine.arguments[0]), Bundle.main.bundleURL]
        #if os(Linux)
        starts.insert(URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath(), at: 0)
        #endif
        for start in starts {
            // Linux: .build/debug/X.xctest; macOS: .build/debug/X.xctest/Contents/MacOS/X.
            var directory = start.deletingLastPathComponent()
            for _ in 0..<4 {
                let candidate = directory.appendingPathComponent(name)
                if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
                directory = directory.deletingLastPathComponent()
            }
        }
        return nil
    }
}
