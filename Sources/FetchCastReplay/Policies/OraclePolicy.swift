import FetchCastCore
import FetchCastModel
import FetchCastTrace

/// A launch the oracle can see coming.
struct FutureLaunch: Sendable, Hashable {
    /// Unix seconds.
    var time: Double
    /// The device's UTC offset at the launch.
    var utcOffsetSeconds: Int32
    /// Canonical app id.
    var app: Int32

    init(time: Double, utcOffsetSeconds: Int32, app: Int32) {
        self.time = time
        self.utcOffsetSeconds = utcOffsetSeconds
        self.app = app
    }
}

/// `oracle` (rule 4): per device and local calendar day of the launch, one fetch 1 s before
/// each of the first ⌊B⌋ needy launches of that day (time order, ties by app id, across apps).
///
/// With constraints or system rules (rule 7) it fetches for a needy launch at L at the latest
/// instant in [L − τ, L − 1 s] at which they allow the app (a run of allowed conditions that a
/// `state` row at s ends, ends at s − 1 s, or at its start when it is shorter), and only the
/// needy launches with such an instant count towards the day's ⌊B⌋: the most any policy can
/// make fresh under them.
///
/// It reads the device's launches ahead of the replay through `future`, which must yield the
/// device's launches (any app) in time order and add the `state` rows it passes to the timeline
/// it is handed. Whether a launch is needy depends only on the launches before it, so the
/// oracle can tell ahead of time. Its cap counts by the launch's local day, so a fetch at
/// 23:59:59 for a launch at 00:00:00 counts on the later day.
///
/// - Complexity: O(1) amortised per launch without constraints (O(rows in τ) with them),
///   memory O(k + launches in τ) and the device's `state` rows.
struct OraclePolicy: FetchPolicy {
    private let apps: [Int32]
    private let cap: Int
    private let tau: Double
    private let future: (inout ConditionTimeline) -> FutureLaunch?
    /// The constraints and the system's rules, per app in `apps` order; `nil`: none.
    private let rules: SlotRules?
    private var timeline = ConditionTimeline()
    private var lookahead: FutureLaunch?
    private var lastLaunch: [Double?]
    private var dayCounts: [Int: Int] = [:]
    /// Fetches chosen but not yet made from `pendingStart` on, by (time, launch time, app).
    private var pending: [(time: Double, launch: Double, app: Int32)] = []
    private var pendingStart = 0
    private var group: [FutureLaunch] = []

    /// Creates the oracle for a device.
    /// - Parameters:
    ///   - rules: The constraints and the system's rules, per app of `context.apps` sorted;
    ///     `nil` when there are none.
    init(context: DeviceContext, rules: SlotRules? = nil, future: @escaping (inout ConditionTimeline) -> FutureLaunch?) {
        apps = context.apps.sorted()
        cap = context.dailyCap
        tau = context.tau
        self.rules = rules
        self.future = future
        lastLaunch = Array(repeating: nil, count: apps.count)
        lookahead = future(&timeline)
        plan()
    }

    var nextWakeup: Double? { pendingStart < pending.count ? pending[pendingStart].time : nil }

    mutating func wake(at time: Double, into fetches: inout [PlannedFetch]) {
        while pendingStart < pending.count && pending[pendingStart].time <= time {
            fetches.append(PlannedFetch(app: pending[pendingStart].app, reason: .oracle))
            pendingStart += 1
        }
        if pendingStart == pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingStart = 0
        }
        plan()
    }

    mutating func observe(_ event: DeviceEvent) {}
    mutating func didFetch(app: Int32, at time: Double, result: FetchResult) {}

    /// Reads ahead until a fetch is planned and every launch whose fetch could come before the
    /// next one planned has been read (its fetch is at most τ before it), or the launches run out.
    private mutating func plan() {
        while let first = lookahead, nextWakeup.map({ first.time - tau <= $0 }) ?? true {
            // One group: every launch at this instant, ties by app id.
            group.removeAll(keepingCapacity: true)
            while let l = lookahead, l.time == first.time {
                group.append(l)
                lookahead = future(&timeline)
            }
            if group.count > 1 { group.sort { $0.app < $1.app } }
            var added = false
            for l in group {
                guard let slot = apps.firstIndex(of: l.app) else { continue }
                defer { lastLaunch[slot] = l.time }
                guard let previous = lastLaunch[slot], l.time - previous > tau else { continue }
                let d = LocalTime.day(time: l.time, utcOffsetSeconds: l.utcOffsetSeconds)
                let used = dayCounts[d, default: 0]
                guard used < cap else { continue }
                var time = l.time - 1
                if let rules {
                    guard let t = timeline.latestInstant(from: l.time - tau, through: l.time - 1, where: { rules.allows(slot, under: $0) }) else {
                        continue
                    }
                    time = t
                }
                dayCounts[d] = used + 1
                if dayCounts.count > 8 { dayCounts = dayCounts.filter { $0.key >= d - 2 } }
                pending.append((time, l.time, l.app))
                added = true
            }
            if added, rules != nil {
                pending[pendingStart...].sort { ($0.time, $0.launch, $0.app) < ($1.time, $1.launch, $1.app) }
            }
        }
    }
}

extension ConditionTimeline {
    /// The latest instant in [`lo`, `hi`] (Unix seconds) whose conditions `allows`, where a run
    /// of conditions that a row at s ends, ends at s − 1 s (at its start when it is shorter);
    /// `nil` when there is none.
    func latestInstant(from lo: Double, through hi: Double, where allows: (DeviceConditions) -> Bool) -> Double? {
        guard lo <= hi else { return nil }
        // The row in effect at `hi`, then each earlier one.
        var low = 0, high = times.count
        while low < high {
            let mid = (low + high) / 2
            if Double(times[mid]) / 1_000_000 <= hi { low = mid + 1 } else { high = mid }
        }
        var i = low - 1
        var end: Double? = nil  // the instant the run after row i starts (nil: the run holds at hi)
        while true {
            let start = i >= 0 ? Double(times[i]) / 1_000_000 : -.infinity
            if allows(i >= 0 ? states[i] : .unknown) {
                guard let s = end else { return hi }
                return lo < s ? max(s - 1, start, lo) : nil
            }
            guard i >= 0, lo < start else { return nil }
            end = start
            i -= 1
        }
    }
}
