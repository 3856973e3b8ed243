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
        // Commands without --db: the default store, and any SQLite file by its content.
        ["habits", "generate", "-o", "fetchcast.sqlite"],
        ["habits", "generate", "-o", "fetchcast.sqlite.gz"],
        ["habits", "generate", "-o", "link.sqlite"],
        ["habits", "generate", "-o", "fetchcast.sqlite-wal"],
        ["habits", "generate", "-o", "copy.sqlite"],
        ["conditions", "generate", "good.csv", "--out", "fetchcast.sqlite"],
        ["conditions", "generate", "good.csv", "--out", "copy.sqlite"],
        ["export", "events", "-o", "copy.sqlite"],
        ["evaluate", "good.csv", "--policies", "interval", "--budgets", "12", "--out", "."],
    ])
    func refusesAnOutputThatIsTheStoreOrAnInput(arguments: [String]) throws {
        let ws = try workspaceWithStore()
        try FileManager.default.createSymbolicLink(atPath: ws.path("link.sqlite"), withDestinationPath: ws.path("fetchcast.sqlite"))
        try FileManager.default.copyItem(atPath: ws.path("fetchcast.sqlite"), toPath: ws.path("copy.sqlite"))
        // A gzip-named file that is a store all the same, and an evaluation output named as one.
        try FileManager.default.copyItem(atPath: ws.path("fetchcast.sqlite"), toPath: ws.path("fetchcast.sqlite.gz"))
        try FileManager.default.copyItem(atPath: ws.path("fetchcast.sqlite"), toPath: ws.path("summary.csv"))
        let store = try bytes(ws, "fetchcast.sqlite")
        let copy = try bytes(ws, "copy.sqlite")
        let input = try bytes(ws, "good.csv")
        let result = try ws.run(arguments)
        #expect(result.status == 1)
        #expect(result.err.contains("writing there would destroy it, so name another output file"), "\(result.err)")
        #expect(try bytes(ws, "fetchcast.sqlite") == store)
        #expect(try bytes(ws, "copy.sqlite") == copy)
        #expect(try bytes(ws, "fetchcast.sqlite.gz") == store)
        #expect(try bytes(ws, "summary.csv") == store)
        #expect(try bytes(ws, "good.csv") == input)
        #expect(try ws.stats() == IngestCLITests.goodStats)
    }

    @Test func habitsGenerateRefusesTheStoreNamedByTheEnvironment() throws {
        let ws = try Workspace()
        try ws.copyFixture("good.csv")
        try #require(try ws.run(["ingest", "--db", "st.sqlite", "good.csv"]).status == 0)
        let store = try bytes(ws, "st.sqlite")
        let result = try ws.run(["habits", "generate", "-o", "st.sqlite"], environment: ["FETCHCAST_DB": "st.sqlite"])
        #expect(result.status == 1)
        #expect(result.err.contains("st.sqlite: is the store"), "\(result.err)")
        #expect(try bytes(ws, "st.sqlite") == store)
    }

    @Test func habitsGenerateReplacesAnOldOutputOnlyWhenComplete() throws {
        let ws = try Workspace()
        try ws.write("keep.csv", "the old output\n")
        // A refused run (an unknown archetype) leaves the old file as it was.
        let refused = try ws.run(["habits", "generate", "--archetypes", "nobody", "-o", "keep.csv"])
        #expect(refused.status != 0)
        #expect(try String(contentsOfFile: ws.path("keep.csv"), encoding: .utf8) == "the old output\n")
        let done = try ws.run(["habits", "generate", "-o", "keep.csv"])
        #expect(done.status == 0, "\(done.err)")
        #expect(try String(contentsOfFile: ws.path("keep.csv"), encoding: .utf8).hasPrefix("time,device,app,event"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: ws.directory).filter { $0.hasPrefix(".keep.csv.fetchcast-") } == [])
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

    @Test(arguments: ["keep.csv", "keep.csv.gz"])
    func habitsGenerateToAFullDiskLeavesTheOldFileAndNamesIt(name: String) throws {
        let ws = try Workspace()
        try ws.write(name, "the old output\n")
        // Four heavy users for 60 days pass 64 KiB, compressed or not.
        let result = try ws.run(
            ["habits", "generate", "--archetypes", "heavy", "--devices-per-archetype", "4", "--days", "60", "-o", name], fileSizeLimitKiB: 64)
        #expect(result.status == 1)
        #expect(result.err.contains("error: could not write \(name): File too large"), "\(result.err)")
        #expect(String(decoding: try bytes(ws, name), as: UTF8.self) == "the old output\n")
        let left = try FileManager.default.contentsOfDirectory(atPath: ws.directory).filter { $0.contains("keep.csv") }
        #expect(left == [name])
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
