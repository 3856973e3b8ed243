import Foundation
import Synchronization

/// How far pass 2 has got: records replayed of all devices' records, counted by the device
/// threads (a few thousand at a time) and read by the thread that reports progress.
final class ReplayProgress: Sendable {
    /// Records to replay: each device's own and the publishes to every device it sees.
    let total: Int
    let started: Double
    private let done = Atomic<Int>(0)

    init(total: Int, started: Double) {
        self.total = total
        self.started = started
    }

    func add(_ records: Int) { done.add(records, ordering: .relaxed) }

    /// "replaying 14 devices × 10 policy runs: 45% of 2.7M events, about 1 min 20 s left".
    func line(devices: Int, runs: Int, now: Double) -> String {
        let fraction = total > 0 ? min(0.99, Double(done.load(ordering: .relaxed)) / Double(total)) : 0
        var line = "replaying \(devices) devices × \(runs) policy runs: \(Int(saturating: fraction * 100))% of \(Self.count(total)) events"
        let elapsed = now - started
        if fraction >= 0.01 && elapsed >= 1 { line += ", about \(Self.duration(elapsed / fraction - elapsed)) left" }
        return line
    }

    static func count(_ n: Int) -> String {
        n >= 1_000_000 ? String(format: "%.1fM", Double(n) / 1e6) : n >= 10_000 ? "\(n / 1000)k" : String(n)
    }

    /// "45 s", "3 min 20 s", "2 h 5 min".
    static func duration(_ seconds: Double) -> String {
        let s = Int(saturating: seconds.rounded())
        if s < 60 { return "\(max(s, 0)) s" }
        if s < 3600 { return "\(s / 60) min \(s % 60) s" }
        return "\(s / 3600) h \(s % 3600 / 60) min"
    }
}
