import FetchCastCore

/// One fetch in a plan: when, for which app, and why.
public struct ScheduledFetch: Sendable, Hashable {
    /// The app.
    public var app: Int32
    /// When to fetch (Unix seconds).
    public var time: Double
    /// P(a session of the app starts within τ after `time`).
    public var launchProbability: Double
    /// P(the fetch finds new data).
    public var newDataProbability: Double
    /// Why.
    public var reason: FetchReason
}

/// Plans the next fetches of a device ahead of time (`fetchcast predict`, a push backend
/// deciding when to send silent pushes): the time-based half of ``LearnedPolicy``; the other
/// half, fetching right after a launch for the apps likely to follow, needs the launch and is
/// made live by the policy.
public enum FetchPlanner {
    /// Plans fetches in `[from, from + horizon)`.
    ///
    /// Candidates every 5 minutes per app are valued `P(session within τ) × P(new data)`; the
    /// best are taken greedily, at most ⌊budget⌋ per local day, none within τ or the minimum
    /// interval of another fetch of the same app, none below the minimum value, and none before
    /// `notBefore`. Then fetches of different apps less than 10 minutes apart are merged into
    /// the earlier one's radio wakeup when that keeps at least 90% of the later one's value.
    ///
    /// - Complexity: O(apps × horizon / 5 min) valuations plus a sort.
    public static func plan(
        model: DeviceModel, apps: [Int32], from start: Double, horizon: Double = 86_400,
        configuration: SchedulerConfiguration, prior: DevicePrior
    ) -> [ScheduledFetch] {
        let tau = model.configuration.tau
        let step = 300.0
        let begin = max(start, configuration.notBefore ?? start)
        let offset = model.lastOffset
        struct Candidate { var app: Int32; var time: Double; var session: Double; var newData: Double; var value: Double }
        var candidates: [Candidate] = []
        var rates: [Int32: [Double]] = [:]
        for app in apps { rates[app] = model.sessionRates(app: app, now: start, prior: prior) }
        var g = begin
        while g < start + horizon {
            for app in apps {
                let refreshed = model.lastRefresh(of: app)
                let uncovered = refreshed.map { max(0, min(1, (g + tau - max(g, $0 + tau)) / tau)) } ?? 1
                guard uncovered > 0 else { continue }
                let session = model.sessionProbability(rates: rates[app]!, from: g, to: g + tau)
                let newData = model.newDataProbability(app: app, at: g, since: refreshed ?? start, now: start)
                let value = session * newData * uncovered
                if value >= configuration.minimumValue {
                    candidates.append(Candidate(app: app, time: g, session: session, newData: newData, value: value))
                }
            }
            g += step
        }
        candidates.sort { ($0.value, $1.time, $1.app) > ($1.value, $0.time, $0.app) }
        var chosen: [Candidate] = []
        var perDay: [Int: Int] = [:]
        let spacing = max(tau, configuration.minimumInterval)
        for c in candidates {
            let day = LocalTime.day(time: c.time, utcOffsetSeconds: offset)
            if perDay[day, default: 0] >= configuration.dailyCap { continue }
            if chosen.contains(where: { $0.app == c.app && abs($0.time - c.time) < spacing }) { continue }
            chosen.append(c)
            perDay[day, default: 0] += 1
        }
        chosen.sort { ($0.time, $0.app) < ($1.time, $1.app) }
        var plan: [ScheduledFetch] = chosen.map {
            ScheduledFetch(app: $0.app, time: $0.time, launchProbability: $0.session, newDataProbability: $0.newData,
                           reason: .likelyLaunch(probability: $0.session))
        }
        // Coalesce: pull a fetch forward into an earlier wakeup of another app when little is lost.
        var i = 1
        while i < plan.count {
            let earlier = plan[i - 1], later = plan[i]
            if later.app != earlier.app, later.time - earlier.time > 0, later.time - earlier.time < 600 {
                let session = model.sessionProbability(rates: rates[later.app]!, from: earlier.time, to: earlier.time + tau)
                let newData = model.newDataProbability(app: later.app, at: earlier.time, since: model.lastRefresh(of: later.app) ?? start, now: start)
                if session * newData >= 0.9 * later.launchProbability * later.newDataProbability {
                    plan[i] = ScheduledFetch(app: later.app, time: earlier.time, launchProbability: session,
                                             newDataProbability: newData, reason: .coalesced(with: earlier.app))
                }
            }
            i += 1
        }
        return plan
    }
}
