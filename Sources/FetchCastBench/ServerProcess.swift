#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FetchCastCore
import FetchCastStore

/// `fetchcast serve --port 0 --insecure-no-auth` as a child process, with the port it printed.
final class ServerProcess {
    let pid: pid_t
    let port: Int
    /// Where its log goes.
    let logPath: String
    /// When it was started (``WallClock/monotonic()``).
    let started: Double
    private var stopped = false

    init(executable: String, store: String, directory: String) throws {
        let errPath = directory + "/serve-\(UInt32.random(in: 0...UInt32.max)).err"
        logPath = errPath
        started = WallClock.monotonic()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = [executable, "serve", "--db", store, "--port", "0", "--insecure-no-auth", "--max-body", "1GiB"]
        let cArgs = argv.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        var child: pid_t = 0
        let rc = cArgs.withUnsafeBufferPointer { posix_spawnp(&child, argv[0], &actions, nil, $0.baseAddress!, environ) }
        guard rc == 0 else { throw ServeBenchmark.Failure(description: "cannot start \(executable) serve") }
        pid = child
        let deadline = WallClock.monotonic() + 30
        var found: Int?
        while found == nil && WallClock.monotonic() < deadline {
            let text = (try? ServeBenchmark.readFile(errPath)).map { String(decoding: $0, as: UTF8.self) } ?? ""
            if let range = text.firstRange(of: "listening on http://127.0.0.1:") {
                found = Int(text[range.upperBound...].prefix(while: \.isNumber))
            } else {
                usleep(20_000)
            }
        }
        guard let found else {
            kill(child, SIGKILL)
            throw ServeBenchmark.Failure(description: "fetchcast serve did not start (see \(errPath))")
        }
        port = found
    }

    /// Waits until its log holds `text` or `seconds` have passed since it started; returns the
    /// seconds from its start to when the text was seen, `nil` when it was not.
    func waitForLog(_ text: String, seconds: Double) -> Double? {
        while WallClock.monotonic() < started + seconds {
            if let bytes = try? ServeBenchmark.readFile(logPath), String(decoding: bytes, as: UTF8.self).contains(text) {
                return WallClock.monotonic() - started
            }
            usleep(50_000)
        }
        return nil
    }

    /// The child's peak resident set (VmHWM), in KiB.
    func peakRSSKiB() -> Int {
        guard let bytes = try? ServeBenchmark.readFile("/proc/\(pid)/status") else { return 0 }
        let text = String(decoding: bytes, as: UTF8.self)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    /// CPU seconds (user + system) the child has used so far (`/proc/PID/stat`; 0 elsewhere).
    func cpuSeconds() -> Double {
        guard let bytes = try? ServeBenchmark.readFile("/proc/\(pid)/stat"), let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return 0 }
        let fields = String(decoding: bytes[(close + 1)...], as: UTF8.self).split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// SIGTERM, then waits for the exit.
    func stop() {
        guard !stopped else { return }
        stopped = true
        kill(pid, SIGTERM)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }

    deinit { stop() }
}
