import FetchCastCore
import Foundation

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
        candidates.reserveCapacity(apps.count * Int(horizon / step + 1))
        var rates: [Int32: [Double]] = [:]
        var refreshes: [Int32: Double] = [:]
        for app in apps {
            // Everything per app is looked up once, not per 5-minute candidate.
            let appRates = model.sessionRates(app: app, now: start, prior: prior)
            rates[app] = appRates
            // A refresh after `start` (planning from a time inside the history the model has
            // already seen) says nothing about the cache at `start`: planned as unknown.
            let refreshed = model.lastRefresh(of: app).flatMap { $0 <= start ? $0 : nil }
            refreshes[app] = refreshed
            let since = refreshed ?? start
            // P(new data) = 1 − exp(−∫ content rate since the last refresh): the integral grows
            // step by step instead of being summed from the refresh again for every candidate.
            let contentRates = model.contentRates(app: app, now: start)
            var expectedContent = 0.0
            var integratedUntil = since
            var g = begin
            while g < start + horizon {
                let uncovered = refreshed.map { max(0, min(1, (g + tau - max(g, $0 + tau)) / tau)) } ?? 1
                if uncovered > 0 {
                    let session = model.sessionProbability(rates: appRates, from: g, to: g + tau)
                    var newData = 1.0
                    if let contentRates {
                        if g > integratedUntil {
                            HourOfWeek.spread(from: integratedUntil, to: g, offset: offset) { slot, seconds in
                                expectedContent += contentRates[slot] * seconds / 3600
                            }
                            integratedUntil = g
                        }
                        newData = g > since ? 1 - exp(-expectedContent) : 0
                    }
                    let value = session * newData * uncovered
                    if value >= configuration.minimumValue {
                        candidates.append(Candidate(app: app, time: g, session: session, newData: newData, value: value))
                    }
                }
                g += step
            }
        }
        // A total order (value, then earlier, then lower app id), so the generation order above
        // does not matter.
        candidates.sort { ($0.value, $1.time, $1.app) > ($1.value, $0.time, $0.app) }
        var chosen: [Candidate] = []
        var chosenTimes: [Int32: [Double]] = [:]
        var perDay: [Int: Int] = [:]
        let spacing = max(tau, configuration.minimumInterval)
        for c in candidates {
            let day = LocalTime.day(time: c.time, utcOffsetSeconds: offset)
            if perDay[day, default: 0] >= configuration.dailyCap { continue }
            if chosenTimes[c.app]?.contains(where: { abs($0 - c.time) < spacing }) == true { continue }
            chosen.append(c)
            chosenTimes[c.app, default: []].append(c.time)
            perDay[day, default: 0] += 1
        }
        chosen.sort { ($0.time, $0.app) < ($1.time, $1.app) }
        // Each planned fetch refreshes the cache: the next one of the same app finds only what
        // appears after it. Values were computed against the last real refresh; recompute the
        // chance of new data from the previous planned fetch and drop the fetches that no
        // longer clear the minimum value (a quiet night after an evening fetch).
        var previous: [Int32: Double] = [:]
        var kept: [Candidate] = []
        for var c in chosen {
            if let since = previous[c.app] {
                c.newData = model.newDataProbability(app: c.app, at: c.time, since: since, now: start)
                guard c.session * c.newData >= configuration.minimumValue else { continue }
            }
            previous[c.app] = c.time
            kept.append(c)
        }
        var plan: [ScheduledFetch] = kept.map {
            ScheduledFetch(app: $0.app, time: $0.time, launchProbability: $0.session, newDataProbability: $0.newData,
                           reason: .likelyLaunch(probability: $0.session))
        }
        // Coalesce: pull a fetch forward into an earlier wakeup of another app when little is lost.
        var refreshedAt: [Int32: Double] = [:]
        if let first = plan.first { refreshedAt[first.app] = first.time }
        var i = 1
        while i < plan.count {
            let earlier = plan[i - 1], later = plan[i]
            if later.app != earlier.app, later.time - earlier.time > 0, later.time - earlier.time < 600 {
                let session = model.sessionProbability(rates: rates[later.app]!, from: earlier.time, to: earlier.time + tau)
                let since = refreshedAt[later.app] ?? refreshes[later.app] ?? start
                let newData = model.newDataProbability(app: later.app, at: earlier.time, since: since, now: start)
                if session * newData >= 0.9 * later.launchProbability * later.newDataProbability {
                    plan[i] = ScheduledFetch(app: later.app, time: earlier.time, launchProbability: session,
                                             newDataProbability: newData, reason: .coalesced(with: earlier.app))
                }
            }
            refreshedAt[plan[i].app] = plan[i].time
            i += 1
        }
        return plan
    }
}
