import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Outputs never destroy the store or an input, a failed output leaves the old file whole, and
/// every write failure is named.
struct OutputSafetyCLITests {
    /// A workspace whose `fetchcast.sqlite` holds good.csv.
    private func workspaceWithStore() throws -> Workspace {
        let ws = try Workspace()
        try ws.copyFixture("good.csv")
        try #require(try ws.run(["ingest", "good.csv"]).status == 0)
        return ws
    }

    private func bytes(_ ws: Workspace, _ name: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: ws.path(name)))
    }

    @Test(arguments: [
        ["export", "events", "-o", "fetchcast.sqlite"],
        ["export", "model", "-o", "fetchcast.sqlite"],
        ["export", "events", "-o", "./link.sqlite"],
        ["export", "events", "--db", "link.sqlite", "-o", "fetchcast.sqlite"],
        ["export", "events", "-o", "fetchcast.sqlite-wal"],
        ["ingest", "--skip-invalid", "--rejects", "fetchcast.sqlite", "good.csv"],
        ["ingest", "--skip-invalid", "--rejects", "good.csv", "good.csv"],
    ])
    func refusesAnOutputThatIsTheStoreOrAnInput(arguments: [String]) throws {
        let ws = try workspaceWithStore()
        try FileManager.default.createSymbolicLink(atPath: ws.path("link.sqlite"), withDestinationPath: ws.path("fetchcast.sqlite"))
        let store = try bytes(ws, "fetchcast.sqlite")
        let input = try bytes(ws, "good.csv")
        let result = try ws.run(arguments)
        #expect(result.status == 1)
        #expect(result.err.contains("writing there would destroy it, so name another output file"), "\(result.err)")
        #expect(try bytes(ws, "fetchcast.sqlite") == store)
        #expect(try bytes(ws, "good.csv") == input)
        #expect(try ws.stats() == IngestCLITests.goodStats)
    }

    @Test func refusesARejectsFileThatIsTheStoreItWouldCreate() throws {
        let ws = try Workspace()
        try ws.copyFixture("good.csv")
        let result = try ws.run(["ingest", "--db", "new.sqlite", "--skip-invalid", "--rejects", "new.sqlite", "good.csv"])
        #expect(result.status == 1)
        #expect(result.err.contains("new.sqlite: is the store"), "\(result.err)")
        #expect(!FileManager.default.fileExists(atPath: ws.path("new.sqlite")))
    }

    @Test func conditionsGenerateRefusesToOverwriteItsTrace() throws {
        let ws = try Workspace()
        try ws.copyFixture("good.csv")
        let before = try bytes(ws, "good.csv")
        let result = try ws.run(["conditions", "generate", "good.csv", "--out", "good.csv"])
        #expect(result.status == 1)
        #expect(result.err.contains("good.csv: is an input"), "\(result.err)")
        #expect(try bytes(ws, "good.csv") == before)
    }

    @Test func evaluateRefusesAnOutputThatIsItsTraceBeforeReplaying() throws {
        let ws = try Workspace()
        try FileManager.default.createDirectory(atPath: ws.path("out"), withIntermediateDirectories: true)
        try ws.copyFixture("good.csv")
        try FileManager.default.moveItem(atPath: ws.path("good.csv"), toPath: ws.path("out/devices.csv"))
        let before = try bytes(ws, "out/devices.csv")
        let result = try ws.run(["evaluate", "out/devices.csv", "--out", "out", "--policies", "interval", "--budgets", "12"])
        #expect(result.status == 1)
        #expect(result.err.contains("out/devices.csv: is an input"), "\(result.err)")
        #expect(try bytes(ws, "out/devices.csv") == before)
        #expect(!FileManager.default.fileExists(atPath: ws.path("out/summary.csv")))
    }

    @Test func evaluateRefusesAnOutputDirectoryThatIsAFile() throws {
        let ws = try workspaceWithStore()
        let result = try ws.run(["evaluate", "--db", "fetchcast.sqlite", "--out", "good.csv", "--policies", "interval", "--budgets", "12"])
        #expect(result.status == 1)
        #expect(result.err.contains("good.csv: is a file, not a directory"), "\(result.err)")
    }

    @Test func exportToAFullDiskLeavesTheOldFileAndSaysWhy() throws {
        let ws = try workspaceWithStore()
        // Rows enough to pass 64 KiB.
        try ws.generateTrace("big.csv.gz", rows: 5_000)
        try #require(try ws.run(["ingest", "big.csv.gz"]).status == 0)
        try ws.write("events.csv", "the previous export\n")
        let result = try ws.run(["export", "events", "-o", "events.csv"], fileSizeLimitKiB: 64)
        #expect(result.status == 1)
        #expect(result.err.contains("error: could not write events.csv: File too large"), "\(result.err)")
        #expect(String(decoding: try bytes(ws, "events.csv"), as: UTF8.self) == "the previous export\n")
        // No temporary file is left beside it.
        let left = try FileManager.default.contentsOfDirectory(atPath: ws.directory).filter { $0.contains("events.csv") }
        #expect(left == ["events.csv"])
        // With room, the export replaces it.
        #expect(try ws.run(["export", "events", "-o", "events.csv"]).status == 0)
        #expect(try bytes(ws, "events.csv").count > 64 * 1024)
    }

    @Test(.enabled(if: Workspace.canRunAsNobody))
    func leavesAFileItMayNotWriteAlone() throws {
        let ws = try workspaceWithStore()
        chmod(ws.directory, 0o777)  // the folder would let a rename replace the file
        chmod(ws.path("fetchcast.sqlite"), 0o644)
        try ws.write("theirs.csv", "someone else's\n")
        chmod(ws.path("theirs.csv"), 0o644)
        let result = try ws.runAsNobody(["export", "events", "-o", "theirs.csv"])
        #expect(result.status == 1)
        #expect(result.err.contains("could not write theirs.csv: Permission denied"), "\(result.err)")
        #expect(String(decoding: try bytes(ws, "theirs.csv"), as: UTF8.self) == "someone else's\n")
    }

    /// Runs `fetchcast` with its standard output on /dev/full.
    private func runToFullDevice(_ ws: Workspace, _ arguments: [String]) throws -> (status: Int32, err: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "exec \"$0\" \"$@\" > /dev/full", Workspace.executable.path] + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: ws.directory)
        var env = ProcessInfo.processInfo.environment
        env["FETCHCAST_DB"] = nil
        process.environment = env
        let err = Pipe()
        process.standardError = err
        try process.run()
        let data = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full")), arguments: [
        ["stats"], ["devices"], ["files"], ["predict"], ["model", "--device", "dev-1"], ["export", "events"],
        ["export", "model", "-o", "/dev/full"],
    ])
    func namesAStandardOutputItCouldNotWrite(arguments: [String]) throws {
        let ws = try workspaceWithStore()
        let result = try runToFullDevice(ws, arguments)
        #expect(result.status == 1)
        let name = arguments.contains("/dev/full") ? "/dev/full" : "standard output"
        #expect(result.err.contains("error: could not write \(name): No space left on device"), "\(result.err)")
    }

    @Test func aClosedPipeEndsQuietly() throws {
        let ws = try workspaceWithStore()
        try ws.generateTrace("big.csv.gz", rows: 20_000)
        try #require(try ws.run(["ingest", "big.csv.gz"]).status == 0)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        // SIGPIPE ignored (as a caller may leave it), so that fetchcast sees EPIPE: it must
        // still end quietly with status 0 (by default SIGPIPE ends it, as quietly).
        process.arguments = ["-c", "trap '' PIPE; set -o pipefail; \"$0\" export events | head -1 > /dev/null", Workspace.executable.path]
        process.currentDirectoryURL = URL(fileURLWithPath: ws.directory)
        let err = Pipe()
        process.standardError = err
        try process.run()
        let data = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(data.isEmpty, "\(String(decoding: data, as: UTF8.self))")
    }
}
