import Foundation
import Testing

/// `scripts/install.sh`, given the binary these tests run (FETCHCAST=…) so that it builds
/// nothing: it must install into $PREFIX/bin a fetchcast that runs, and say whether that
/// directory is on PATH.
struct InstallScriptTests {
    struct Run {
        var status: Int32
        var stderr: String
    }

    static func install(prefix: String, path: String) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [CLIReferenceTests.repository.appendingPathComponent("scripts/install.sh").path]
        var env = ProcessInfo.processInfo.environment
        env["PREFIX"] = prefix
        env["FETCHCAST"] = Workspace.executable.path
        env["PATH"] = path
        process.environment = env
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let data = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stderr: String(decoding: data, as: UTF8.self))
    }

    @Test func installsIntoThePrefixAndSaysItIsNotOnPath() throws {
        let ws = try Workspace()
        let prefix = ws.path("prefix")
        let run = try Self.install(prefix: prefix, path: "/usr/bin:/bin")
        #expect(run.status == 0, "\(run.stderr)")
        let expected = try ws.run(["--version"]).out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!expected.isEmpty)
        let installed = prefix + "/bin/fetchcast"
        #expect(FileManager.default.isExecutableFile(atPath: installed))
        #expect(run.stderr.contains("installed \(installed) (\(expected))"), "\(run.stderr)")
        #expect(run.stderr.contains("\(prefix)/bin is not on your PATH"), "\(run.stderr)")
        #expect(run.stderr.contains("export PATH=\"\(prefix)/bin:$PATH\""), "\(run.stderr)")

        // The installed binary runs on its own.
        let version = Process()
        version.executableURL = URL(fileURLWithPath: installed)
        version.arguments = ["--version"]
        let out = Pipe()
        version.standardOutput = out
        try version.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        version.waitUntilExit()
        #expect(version.terminationStatus == 0)
        #expect(text == expected + "\n")
    }

    @Test func saysWhenThePrefixIsOnPath() throws {
        let ws = try Workspace()
        let prefix = ws.path("prefix")
        let run = try Self.install(prefix: prefix, path: "\(prefix)/bin:/usr/bin:/bin")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("\(prefix)/bin is on your PATH: run fetchcast --help"), "\(run.stderr)")
    }
}
