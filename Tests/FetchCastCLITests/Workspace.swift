import FetchCastTestSupport
import Foundation
import Testing

/// What a finished `fetchcast` run left behind.
struct CommandResult {
    var status: Int32
    /// Whether the process was killed by a signal rather than exiting.
    var signalled: Bool
    var stdout: Data
    var stderr: Data

    var out: String { String(decoding: stdout, as: UTF8.self) }
    var err: String { String(decoding: stderr, as: UTF8.self) }

    /// Decodes stdout as one JSON value.
    func json<T: Decodable>(_ type: T.Type) throws -> T {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(type, from: stdout)
    }

    /// Decodes stdout as JSON Lines.
    func jsonLines<T: Decodable>(_ type: T.Type) throws -> [T] {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try out.split(separator: "\n").map { try decoder.decode(type, from: Data($0.utf8)) }
    }
}

/// A `fetchcast` started in the background.
final class RunningCommand {
    let process: Process
    private let stdoutPath: String
    private let stderrPath: String

    init(process: Process, stdoutPath: String, stderrPath: String) {
        self.process = process
        self.stdoutPath = stdoutPath
        self.stderrPath = stderrPath
    }

    var isRunning: Bool { process.isRunning }

    /// Sends SIGKILL (`kill -9`).
    func kill() { _ = Foundation.kill(process.processIdentifier, SIGKILL) }

    /// Sends `signal` (SIGINT, as Ctrl-C would; SIGTERM, as `kill` would).
    func send(_ signal: Int32) { _ = Foundation.kill(process.processIdentifier, signal) }

    /// Waits for the process to end.
    func wait() throws -> CommandResult {
        process.waitUntilExit()
        return CommandResult(
            status: process.terminationStatus, signalled: process.terminationReason == .uncaughtSignal,
            stdout: try Data(contentsOf: URL(fileURLWithPath: stdoutPath)),
            stderr: try Data(contentsOf: URL(fileURLWithPath: stderrPath)))
    }
}

/// A fresh temporary working directory in which `fetchcast` runs (so its default store,
/// `./fetchcast.sqlite`, lands here); removed when released.
final class Workspace {
    let directory: String
    private var runs = 0

    init() throws {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("fetchcast-cli-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url.appendingPathComponent(".io"), withIntermediateDirectories: true)
        directory = url.path
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The built `fetchcast` binary: `$FETCHCAST_BIN` when set, else the one SwiftPM built next
    /// to this test bundle (the test target depends on the executable).
    static let executable: URL = {
        if let override = ProcessInfo.processInfo.environment["FETCHCAST_BIN"] {
            return URL(fileURLWithPath: override)
        }
        return BuiltExecutable.url(named: "fetchcast")
            ?? URL(fileURLWithPath: "fetchcast-not-found-next-to-the-test-bundle")
    }()

    /// The path of a file in the workspace.
    func path(_ name: String) -> String { directory + "/" + name }

    /// Copies a committed fixture into the workspace under its own name.
    func copyFixture(_ name: String) throws {
        let source = try #require(Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures"))
        try FileManager.default.copyItem(atPath: source.path, toPath: path(name))
    }

    /// Writes a file into the workspace.
    func write(_ name: String, _ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path(name)))
    }

    func write(_ name: String, bytes: Data) throws {
        try bytes.write(to: URL(fileURLWithPath: path(name)))
    }

    /// Starts `fetchcast` with `arguments` in the workspace, stdin from `stdin` (or /dev/null).
    /// `fileSizeLimitKiB` caps the size of every file it writes (`ulimit -f`, with SIGXFSZ
    /// ignored so that a write past it fails with EFBIG): a full disk, even for root.
    func start(
        _ arguments: [String], stdin: Data? = nil, environment: [String: String] = [:], fileSizeLimitKiB: Int? = nil
    ) throws -> RunningCommand {
        runs += 1
        let stdoutPath = path(".io/\(runs).out"), stderrPath = path(".io/\(runs).err")
        _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        let process = Process()
        if let fileSizeLimitKiB {
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = ["-c", "ulimit -f \(fileSizeLimitKiB); trap '' XFSZ; exec \"$0\" \"$@\"", Self.executable.path] + arguments
        } else {
            process.executableURL = Self.executable
            process.arguments = arguments
        }
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        var env = ProcessInfo.processInfo.environment
        env["FETCHCAST_DB"] = nil
        env.merge(environment) { $1 }
        process.environment = env
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdoutPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrPath))
        if let stdin {
            let inputPath = path(".io/\(runs).in")
            try stdin.write(to: URL(fileURLWithPath: inputPath))
            process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: inputPath))
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        try process.run()
        return RunningCommand(process: process, stdoutPath: stdoutPath, stderrPath: stderrPath)
    }

    /// Runs `fetchcast` to completion.
    @discardableResult
    func run(
        _ arguments: [String], stdin: Data? = nil, environment: [String: String] = [:], fileSizeLimitKiB: Int? = nil
    ) throws -> CommandResult {
        try start(arguments, stdin: stdin, environment: environment, fileSizeLimitKiB: fileSizeLimitKiB).wait()
    }

    /// `fetchcast stats --format json` on a store.
    func stats(db: String = "fetchcast.sqlite") throws -> StatsJSON {
        let result = try run(["stats", "--db", db, "--format", "json"])
        try #require(result.status == 0, "stats failed: \(result.err)")
        return try result.json(StatsJSON.self)
    }

    /// Gzip-compresses a workspace file with /bin/gzip into `name.gz`.
    func gzip(_ name: String, level: Int = 6) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "gzip -\(level) -c '\(name)' > '\(name).gz'"]
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)
    }

    /// Generates a gzip CSV trace of `rows` launches with awk and gzip (fast, independent of the
    /// code under test).
    func generateTrace(_ name: String, rows: Int, firstSecond: Int = 1_700_000_000) throws {
        let script = """
            awk 'BEGIN { print "time,device,app,event,result,bytes,duration_ms"; \
            for (i = 0; i < \(rows); i++) printf "%d,dev-%d,com.app%d,launch,,,%d\\n", \(firstSecond) + i, i % 200, i % 20, i % 600 }' \
            | gzip -1 > '\(name)'
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)
    }
}

/// `fetchcast stats --format json`.
struct StatsJSON: Decodable, Equatable {
    var schema: Int
    var files: Int
    var events: Int
    var devices: Int
    var apps: Int
    var launches: Int
    var fetches: Int
    var publishes: Int
    var rejected: Int
    var firstEvent: String?
    var lastEvent: String?
    var activeDeviceDays: Int
    var launchesPerDeviceDay: Double
}

/// `fetchcast ingest --format json`.
struct IngestJSON: Decodable {
    struct File: Decodable {
        var path: String
        var sha256: String
        var status: String
        var events: Int
        var rejected: Int
        var bytes: Int
        var seconds: Double
        var format: String
        var gzip: Bool
    }

    struct Failure: Decodable, Equatable {
        var file: String
        var error: String
    }

    var schema: Int
    var files: [File]
    var events: Int
    var rejected: Int
    var failed: String?
    var failures: [Failure]?
    var notTried: [String]?
    var rejectsFile: String?
}

/// One line of `fetchcast files --format json`.
struct StoredFileJSON: Decodable {
    var id: Int
    var name: String
    var sha256: String
    var format: String
    var gzip: Bool
    var sizeBytes: Int
    var rows: Int
    var rejected: Int
    var ingestedAt: String
}
