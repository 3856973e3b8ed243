import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A store path that does not exist, and a store this user may only read.
struct StoreAccessCLITests {
    @Test(arguments: [
        ["stats"], ["devices"], ["files"], ["forget", "good.csv"], ["predict"], ["model", "--device", "dev-1"],
        ["export", "events"], ["evaluate", "--out", "out"],
    ])
    func aStoreThatDoesNotExistIsAnError(arguments: [String]) throws {
        let ws = try Workspace()
        let result = try ws.run(arguments + ["--db", "typo.sqlite"])
        #expect(result.status == 1)
        #expect(result.err.contains("typo.sqlite: no such store"), "\(result.err)")
        #expect(result.err.contains("`fetchcast ingest FILE` creates one"), "\(result.err)")
        #expect(result.out.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: ws.path("typo.sqlite")))
        #expect(!FileManager.default.fileExists(atPath: ws.path("out")))
    }

    @Test func theDefaultStoreMissingIsNamedToo() throws {
        let ws = try Workspace()
        let result = try ws.run(["stats"])
        #expect(result.status == 1)
        #expect(result.err.contains("fetchcast.sqlite: no such store (the default store)"), "\(result.err)")
    }

    /// A store of good.csv that `nobody` may read but not write: in the workspace (a folder
    /// only root may write) and, with `writableFolder`, in a folder anyone may write.
    private func readOnlyStore(writableFolder: Bool) throws -> (Workspace, db: String) {
        let ws = try Workspace()
        try ws.copyFixture("good.csv")
        chmod(ws.directory, 0o755)
        let db = writableFolder ? "shared/s.sqlite" : "s.sqlite"
        if writableFolder {
            try FileManager.default.createDirectory(atPath: ws.path("shared"), withIntermediateDirectories: true)
            chmod(ws.path("shared"), 0o777)
        }
        try #require(try ws.run(["ingest", "--db", db, "good.csv"]).status == 0)
        chmod(ws.path(db), 0o644)
        try FileManager.default.createDirectory(atPath: ws.path("out"), withIntermediateDirectories: true)
        chmod(ws.path("out"), 0o777)
        return (ws, db)
    }

    @Test(.enabled(if: Workspace.canRunAsNobody), arguments: [false, true])
    func aStoreThatCannotBeWrittenIsRead(writableFolder: Bool) throws {
        let (ws, db) = try readOnlyStore(writableFolder: writableFolder)
        let before = try Data(contentsOf: URL(fileURLWithPath: ws.path(db)))
        let stats = try ws.runAsNobody(["stats", "--db", db, "--format", "json"])
        #expect(stats.status == 0, "\(stats.err)")
        #expect(try stats.json(StatsJSON.self) == IngestCLITests.goodStats)
        let devices = try ws.runAsNobody(["devices", "--db", db])
        #expect(devices.status == 0, "\(devices.err)")
        #expect(devices.out.contains("dev-2"))
        for arguments in [["predict"], ["model", "--device", "dev-1"], ["export", "model"]] {
            let result = try ws.runAsNobody(arguments + ["--db", db])
            #expect(result.status == 0, "\(arguments): \(result.err)")
            #expect(!result.out.isEmpty || arguments == ["predict"], "\(arguments)")
            // The learned state could not be saved: said once, on stderr.
            #expect(result.err.contains("is read-only"), "\(arguments): \(result.err)")
            #expect(!result.err.contains("error"), "\(arguments): \(result.err)")
        }
        let exported = try ws.runAsNobody(["export", "events", "--db", db, "--format", "json"])
        #expect(exported.status == 0, "\(exported.err)")
        #expect(exported.out.split(separator: "\n").count == 5)
        let evaluated = try ws.runAsNobody(["evaluate", "--db", db, "--out", "out", "--policies", "interval", "--budgets", "12", "--quiet"])
        #expect(evaluated.status == 0, "\(evaluated.err)")
        #expect(FileManager.default.fileExists(atPath: ws.path("out/summary.csv")))
        #expect(try Data(contentsOf: URL(fileURLWithPath: ws.path(db))) == before)
    }

    @Test(.enabled(if: Workspace.canRunAsNobody), arguments: [["ingest", "good.csv"], ["forget", "good.csv"]])
    func aCommandThatChangesAReadOnlyStoreSaysSo(arguments: [String]) throws {
        let (ws, db) = try readOnlyStore(writableFolder: false)
        let result = try ws.runAsNobody(arguments + ["--db", db])
        #expect(result.status == 1)
        #expect(result.err.contains("\(db): the store is read-only (the file or its folder cannot be written), and this command changes it"), "\(result.err)")
    }
}

extension Workspace {
    /// Whether a command can be run as another user (`nobody`), for whom root-owned files are
    /// read-only: root writes whatever the permissions say.
    static let canRunAsNobody: Bool = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")

    /// Runs `fetchcast` as `nobody` in the workspace (small outputs).
    func runAsNobody(_ arguments: [String]) throws -> CommandResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", Workspace.executable.path] + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        var env = ProcessInfo.processInfo.environment
        env["FETCHCAST_DB"] = nil
        process.environment = env
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Small outputs: read stdout, then stderr.
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CommandResult(status: process.terminationStatus, signalled: process.terminationReason == .uncaughtSignal, stdout: stdout, stderr: stderr)
    }
}
