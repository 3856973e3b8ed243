import FetchCastCore
import FetchCastModel
import FetchCastTrace

/// `weekly`: the launch estimate behind Android's JobScheduler prefetch jobs
/// (`UsageStatsService.calculateEstimatedPackageLaunchTime`, Android 13+), one app at a time.
///
/// The app's next launch is estimated as the first of {each of its launches in the last 7 days
/// + 7 days} still in the future; while the app's history is under a day old (since its first
/// launch seen), + 24 hours instead of + 7 days; with no launch in that window, no estimate. It
/// fetches once, τ/2 before each estimate. It knows only the app's own launches (run one per
/// app through ``PerAppPolicy``; the engine caps it at ⌊B/k_d⌋ per app and local day).
struct WeeklyPolicy: FetchPolicy {
    static let week = 7 * 86_400.0
    static let day = 86_400.0

    private let app: Int32
    private let lead: Double
    private var first: Double?
    /// The app's launches of the last 7 days, oldest first.
    private var launches: [Double] = []
    /// The latest estimate already fetched for.
    private var served = -Double.infinity
    /// The latest instant seen (an event or a wakeup): the next wakeup must be after it.
    private var now = -Double.infinity
    private(set) var nextWakeup: Double?

    init(app: Int32, tau: Double) {
        self.app = app
        lead = tau / 2
    }

    /// The estimate for the next launch as known at `t`, not yet fetched for.
    private func estimate(at t: Double) -> Double? {
        guard let first else { return nil }
        let ahead = t - first < Self.day ? Self.day : Self.week
        var best: Double?
        for l in launches.reversed() {
            let e = l + ahead
            // Launches are in time order: the earliest future estimate comes from the oldest
            // launch still in the window.
            if e > t, e > served { best = e } else { break }
        }
        return best
    }

    private mutating func schedule() {
        guard let e = estimate(at: now) else {
            nextWakeup = nil
            return
        }
        // Known less than τ/2 ahead: fetch at once (one second after what was last seen).
        nextWakeup = max(e - lead, now + DeviceModel.triggerDelay)
    }

    mutating func wake(at t: Double, into fetches: inout [PlannedFetch]) {
        now = t
        if let e = estimate(at: t), e - lead <= t {
            fetches.append(PlannedFetch(app: app, reason: .weekly))
            served = e
        }
        schedule()
    }

    mutating func observe(_ event: DeviceEvent) {
        now = max(now, event.time)
        guard event.kind == .launch, event.app == app else { return }
        if first == nil { first = event.time }
        launches.append(event.time)
        if let i = launches.firstIndex(where: { event.time - $0 < Self.week }), i > 0 { launches.removeFirst(i) }
        schedule()
    }

    mutating func didFetch(app: Int32, at time: Double, result: FetchResult) {}
}
