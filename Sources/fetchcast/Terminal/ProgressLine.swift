import FetchCastCore
import FetchCastStore
import FetchCastTrace

/// A live progress line on a terminal's stderr: bytes, events/s, ETA.
final class ProgressLine {
    let enabled: Bool
    private var shown = false
    private var err = FileSink.standardError()

    init(enabled: Bool) { self.enabled = enabled }

    func update(_ p: IngestProgress) {
        guard enabled else { return }
        var line = "\r\u{1B}[2K\(p.path): \(p.bytesRead / 1_048_576) MiB"
        if let total = p.totalBytes, total > 0 {
            let fraction = Double(p.bytesRead) / Double(total)
            line += " of \(total / 1_048_576) MiB (\(Int(fraction * 100))%)"
            if fraction > 0.01 {
                line += ", ETA \(Int(p.seconds / fraction - p.seconds)) s"
            }
        }
        let rate = p.seconds > 0 ? Double(p.events) / p.seconds : 0
        line += ", \(Plural.count(p.events, "event")), \(FetchCast.Ingest.human(rate)) events/s"
        err.write(line)
        shown = true
    }

    /// "habits generate: 120 of 6,000 devices" (at most once a second).
    func update(_ what: String, done: Int, of total: Int) {
        guard enabled else { return }
        let now = WallClock.monotonic()
        guard done == total || now - lastShown >= 1 else { return }
        lastShown = now
        err.write("\r\u{1B}[2K\(what): \(done) of \(total)")
        shown = true
    }
    private var lastShown = -Double.infinity

    func clear() {
        if shown { err.write("\r\u{1B}[2K") }
        shown = false
    }
}
