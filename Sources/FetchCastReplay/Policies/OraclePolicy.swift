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
/// It reads the device's launches ahead of the replay through `future`, which must yield the
/// device's launches (any app) in time order. Whether a launch is needy depends only on the
/// launches before it, so the oracle can tell ahead of time. Its cap counts by the launch's
/// local day, so a fetch at 23:59:59 for a launch at 00:00:00 counts on the later day.
///
/// - Complexity: O(1) amortised per launch, memory O(k).
struct OraclePolicy: FetchPolicy {
    private let apps: [Int32]
    private let cap: Int
    private let tau: Double
    private let future: () -> FutureLaunch?
    private var lookahead: FutureLaunch?
    private var lastLaunch: [Double?]
    private var dayCounts: [Int: Int] = [:]
    /// Needy launches chosen but not yet fetched for, in fetch order.
    private var pending: [FutureLaunch] = []
    private var pendingStart = 0
    private var group: [FutureLaunch] = []

    /// Creates the oracle for a device.
    init(context: DeviceContext, future: @escaping () -> FutureLaunch?) {
        apps = context.apps.sorted()
        cap = context.dailyCap
        tau = context.tau
        self.future = future
        lastLaunch = Array(repeating: nil, count: apps.count)
        lookahead = future()
        plan()
    }

    var nextWakeup: Double? {
        pendingStart < pending.count ? pending[pendingStart].time - 1 : nil
    }

    mutating func wake(at time: Double, into fetches: inout [PlannedFetch]) {
        while pendingStart < pending.count && pending[pendingStart].time - 1 <= time {
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

    /// Reads ahead until a fetch is planned or the launches run out.
    private mutating func plan() {
        while pendingStart == pending.count, let first = lookahead {
            // One group: every launch at this instant, ties by app id.
            group.removeAll(keepingCapacity: true)
            while let l = lookahead, l.time == first.time {
                group.append(l)
                lookahead = future()
            }
            if group.count > 1 { group.sort { $0.app < $1.app } }
            for l in group {
                guard let slot = apps.firstIndex(of: l.app) else { continue }
                defer { lastLaunch[slot] = l.time }
                guard let previous = lastLaunch[slot], l.time - previous > tau else { continue }
                let d = LocalTime.day(time: l.time, utcOffsetSeconds: l.utcOffsetSeconds)
                let used = dayCounts[d, default: 0]
                guard used < cap else { continue }
                dayCounts[d] = used + 1
                if dayCounts.count > 8 { dayCounts = dayCounts.filter { $0.key >= d - 2 } }
                pending.append(l)
            }
        }
    }
}
