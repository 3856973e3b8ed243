/// Rule 6's view of content for one device: when each fetch-enabled app last published, and
/// the latest publish older than τ at each launch (for `content_fresh_ratio`).
///
/// Shared by every (policy, budget) replay of the device: it depends on publishes only.
/// Memory per app is the publishes of the last τ.
final class ContentTracker {
    /// Per slot: whether the input has publishes for the app at all.
    let hasContent: [Bool]
    /// Per slot: the latest publish so far (−∞ before the first).
    private(set) var lastPublish: [Double]
    /// Per slot: the latest publish that is already older than τ at the current time.
    private var older: [Double]
    /// Per slot: publishes not yet older than τ, oldest first (`heads` marks the start).
    private var recent: [[Double]]
    private var heads: [Int]
    private let tau: Double

    init(hasContent: [Bool], tau: Double) {
        self.hasContent = hasContent
        self.tau = tau
        lastPublish = Array(repeating: -.infinity, count: hasContent.count)
        older = lastPublish
        recent = Array(repeating: [], count: hasContent.count)
        heads = Array(repeating: 0, count: hasContent.count)
    }

    /// Records a publish of the app in `slot` at `time`.
    func publish(slot: Int, at time: Double) {
        lastPublish[slot] = time
        recent[slot].append(time)
        age(slot, before: time - tau)
    }

    /// The latest publish strictly before `time − τ` (−∞ if none): a launch at `time` is
    /// content-fresh iff this is at or before its cache's last refresh.
    func latestPublishOlderThanTau(slot: Int, at time: Double) -> Double {
        guard hasContent[slot] else { return -.infinity }
        age(slot, before: time - tau)
        return older[slot]
    }

    private func age(_ slot: Int, before limit: Double) {
        var h = heads[slot]
        let r = recent[slot]
        while h < r.count && r[h] < limit {
            older[slot] = r[h]
            h += 1
        }
        if h > 64 && h * 2 > r.count {
            recent[slot].removeFirst(h)
            h = 0
        }
        heads[slot] = h
    }
}
