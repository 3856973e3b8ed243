#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FetchCastCore
import FetchCastStore

/// Runs a program and measures it: wall time and the child's peak resident memory.
package struct ChildRun: Sendable {
    /// Exit status (or 128 + signal).
    package var status: Int32
    /// Wall-clock seconds.
    package var seconds: Double
    /// Peak resident set of the child, in KiB (from `wait4`).
    package var maxRSSKiB: Int
    /// User and system CPU seconds of the child and the children it waited for (from `wait4`:
    /// a shell pipeline counts every command in it).
    package var cpuSeconds: Double = 0
}

package enum ChildProcess {
    /// Runs `argv` with stdout/stderr sent to /dev/null unless `inheritOutput`.
    static func run(_ argv: [String], inheritOutput: Bool = false) -> ChildRun {
        var pid: pid_t = 0
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if !inheritOutput {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        let cArgs = argv.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        let started = WallClock.monotonic()
        let rc = cArgs.withUnsafeBufferPointer { buffer in
            posix_spawnp(&pid, argv[0], &actions, nil, buffer.baseAddress!, environ)
        }
        guard rc == 0 else { return ChildRun(status: 127, seconds: 0, maxRSSKiB: 0) }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        let seconds = WallClock.monotonic() - started
        let exit: Int32 = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        return ChildRun(status: exit, seconds: seconds, maxRSSKiB: Int(usage.ru_maxrss), cpuSeconds: cpu)
    }

    /// Runs a shell pipeline with `/bin/sh -c`.
    static func shell(_ command: String) -> ChildRun {
        run(["/bin/sh", "-c", command])
    }

    /// The path of the running executable (for benchmarks that run `fetchcast` as a child).
    package static var currentExecutablePath: String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        if n > 0 { return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        return CommandLine.arguments[0]
    }
}
