#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FetchCastCore
import FetchCastStore

/// Keeps `clients` keep-alive HTTP/1.1 connections to 127.0.0.1 busy from one thread (`poll`):
/// each connection sends a request, waits for the whole response, records the latency and sends
/// the next. One thread, not one a client, so that on a small machine the load generator takes
/// as little CPU from the server it measures as it can (no context switches between 32 threads).
/// For benchmarks only: responses must carry `Content-Length` (no chunked bodies).
struct HTTPLoadGenerator {
    /// What a run measured.
    struct Outcome {
        /// Seconds from send to the end of each `200` response, in completion order.
        var latencies: [Double] = []
        /// Responses other than `200`, and connections that failed.
        var errors = 0
        /// Wall-clock seconds of the run.
        var seconds = 0.0
        /// CPU seconds (user + system) this process spent in the run.
        var cpuSeconds = 0.0
    }

    private struct Client {
        var fd: Int32
        var buffer: [UInt8] = []
        var sentAt = 0.0
        var next: Int
        var open = true
    }

    let port: Int
    let clients: Int

    /// Sends `GET target` for the targets in turn (client `i` starts at a different one) until
    /// `seconds` have passed, then lets every outstanding request finish.
    func run(targets: [String], seconds: Double) throws -> Outcome {
        let requests = targets.map { Array("GET \($0) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8) }
        var all: [Client] = []
        for i in 0..<clients { all.append(Client(fd: try HTTPConnection.connect(port: port), next: i * 7919)) }
        defer { for c in all { close(c.fd) } }
        var outcome = Outcome()
        outcome.latencies.reserveCapacity(200_000)
        let cpuStart = Self.cpuSeconds()
        let start = WallClock.monotonic()
        let deadline = start + seconds
        for i in all.indices { send(&all[i], requests, &outcome) }
        var fds = all.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
        var chunk = [UInt8](repeating: 0, count: 65536)
        while all.contains(where: \.open) {
            let ready = poll(&fds, nfds_t(fds.count), 1000)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { break }  // nothing for a second: the server is stuck
            for i in fds.indices where fds[i].revents != 0 && all[i].open {
                let n = chunk.withUnsafeMutableBytes { recv(all[i].fd, $0.baseAddress, $0.count, 0) }
                guard n > 0 else {
                    outcome.errors += 1
                    all[i].open = false
                    fds[i].fd = -1
                    continue
                }
                all[i].buffer.append(contentsOf: chunk[0..<n])
                guard let status = Self.complete(all[i].buffer) else { continue }
                let now = WallClock.monotonic()
                if status == 200 { outcome.latencies.append(now - all[i].sentAt) } else { outcome.errors += 1 }
                all[i].buffer.removeAll(keepingCapacity: true)
                if now < deadline { send(&all[i], requests, &outcome) } else { all[i].open = false; fds[i].fd = -1 }
            }
        }
        outcome.seconds = WallClock.monotonic() - start
        outcome.cpuSeconds = Self.cpuSeconds() - cpuStart
        return outcome
    }

    private func send(_ client: inout Client, _ requests: [[UInt8]], _ outcome: inout Outcome) {
        let request = requests[client.next % requests.count]
        client.next += 1
        client.sentAt = WallClock.monotonic()
        let sent = request.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = systemSend(client.fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                if n < 0 { if errno == EINTR { continue } else { return false } }
                offset += n
            }
            return true
        }
        if !sent {
            outcome.errors += 1
            client.open = false
        }
    }

    /// The status of a whole response in `bytes` (head and `Content-Length` body), `nil` while
    /// incomplete.
    static func complete(_ bytes: [UInt8]) -> Int? {
        guard let end = find(bytes, [13, 10, 13, 10]) else { return nil }
        var length = 0
        // Header lines after the status line: find `content-length:` (any case).
        let name = Array("content-length:".utf8)
        var line = (find(bytes, [13, 10]) ?? end) + 2
        while line < end {
            let lineEnd = find(bytes, [13, 10], from: line) ?? end
            if lineEnd - line > name.count, zip(bytes[line..<(line + name.count)], name).allSatisfy({ $0 | 0x20 == $1 }) {
                length = 0
                for b in bytes[(line + name.count)..<lineEnd] where b >= 48 && b <= 57 { length = length * 10 + Int(b - 48) }
            }
            line = lineEnd + 2
        }
        guard bytes.count >= end + 4 + length, bytes.count >= 12 else { return nil }
        return Int(bytes[9] - 48) * 100 + Int(bytes[10] - 48) * 10 + Int(bytes[11] - 48)
    }

    private static func find(_ bytes: [UInt8], _ pattern: [UInt8], from start: Int = 0) -> Int? {
        guard bytes.count >= pattern.count else { return nil }
        var i = start
        while i <= bytes.count - pattern.count {
            if bytes[i] == pattern[0] && bytes[(i + 1)..<(i + pattern.count)].elementsEqual(pattern[1...]) { return i }
            i += 1
        }
        return nil
    }

    /// CPU seconds (user + system) of this process so far.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        #if canImport(Glibc)
        getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }
}
