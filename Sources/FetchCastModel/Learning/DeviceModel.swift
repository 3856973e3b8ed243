import FetchCastCore
import Foundation

/// Everything FetchCast learns about one device, updated one event at a time.
///
/// - **Sessions**: a launch of an app that was not launched in the τ before it (a *needy*
///   launch in the evaluator's terms) starts a session. Per app, recency-weighted session counts
///   by local hour of week, and per device the hours it was observed (exposure), so that hours
///   when the phone was off or not logging are not evidence of "no launch".
/// - **Co-usage**: for each launch of app X, whether a session of app Y started within τ after
///   it (and at least ``triggerDelay`` later, since a fetch that reacts to X comes after X).
/// - **Content**: per app, the recency-weighted rate at which new content appears by hour of
///   week, from `publish` events when the device sees them, else from fetch results (`newData`:
///   something appeared since the last refresh; `noData`: nothing did; `failed`: no evidence).
///
/// Apps are dense `Int32` ids chosen by the caller (a symbol table or a name list).
///
/// - Complexity: ``observe(_:)`` is O(1) amortised in the length of the history: it touches at
///   most 25 hour slots, the launches of the last τ, and rescales all weights once per ~40
///   half-lives.
public struct DeviceModel: Sendable, Codable {
    /// The constants used.
    public var configuration: ModelConfiguration
    var scale: DecayScale
    /// Scaled seconds the device was observed, by hour of week.
    var exposure: [Double]
    /// Scaled session starts of every app together, by hour of week.
    var sessionsAll: [Double]
    /// Scaled launch-to-next-launch gaps of every app together, by ``GapBins`` bin.
    var gapsAll: [Double] = Array(repeating: 0, count: GapBins.count)
    /// Response trials and successes of every app together (running totals, so the pooled
    /// estimate costs O(1) and does not depend on dictionary order).
    var responseTrialsAll: [Double] = Array(repeating: 0, count: ResponseBins.count * 2)
    var responseSuccessesAll: [Double] = Array(repeating: 0, count: ResponseBins.count * 2)
    var apps: [Int32: AppState] = [:]
    var triggerTrials: [Int32: Double] = [:]
    var pairSuccesses = PairWeights()
    var recent = RecentLaunches()
    var content: [Int32: ContentState] = [:]
    /// The last launch of any app.
    var lastLaunchAny: Double?
    /// The last event time seen.
    public internal(set) var lastEventTime: Double?
    /// The device's UTC offset at its last event.
    public internal(set) var lastOffset: Int32 = 0
    /// Events observed.
    public internal(set) var eventCount: Int = 0
    /// The local day of the latest fetch observed, and how many fetches that day: what a plan
    /// has left of the day's cap.
    var fetchDay: Int?
    var fetchesOnFetchDay = 0
    /// Each app's latest session starts at their local times, and the days of use: the habit clock.
    var habitLog = HabitLog()
    /// The device's latest pickups after a silence and the apps of their first sessions: the
    /// pickup clock.
    var pickupLog = PickupLog()

    /// A reactive fetch comes this many seconds after the launch it reacts to.
    public static let triggerDelay: Double = 1

    struct AppState: Sendable, Codable {
        var sessions: [Double] = Array(repeating: 0, count: HourOfWeek.count)
        var sessionTotal: Double = 0
        var launchTotal: Double = 0
        var lastLaunch: Double?
        var lastRefresh: Double?
        /// The latest fetch (any result), for the minimum interval between fetches.
        var lastFetch: Double?
        /// Scaled counts of the gaps between consecutive launches, by ``GapBins`` bin.
        var gaps: [Double] = Array(repeating: 0, count: GapBins.count)
        /// After a launch of another app: trials and sessions of this app within τ, by
        /// ``ResponseBins`` bin (time since this app's last launch) and burst start.
        var responseTrials: [Double] = Array(repeating: 0, count: ResponseBins.count * 2)
        var responseSuccesses: [Double] = Array(repeating: 0, count: ResponseBins.count * 2)
    }

    struct RecentLaunch: Sendable, Codable {
        var time: Double
        var app: Int32
        var weight: Double
        /// ``ResponseBins/idleOffset(sinceAnyLaunch:tau:)`` at this launch.
        var idle: Int
    }

    struct ContentState: Sendable, Codable {
        var events: [Double] = Array(repeating: 0, count: HourOfWeek.count)
        var exposure: [Double] = Array(repeating: 0, count: HourOfWeek.count)
        var fromPublishes = false
        var lastPublish: Double?
        var newData: Int = 0
        var noData: Int = 0
    }

    /// Creates an empty model.
    public init(configuration: ModelConfiguration = ModelConfiguration(), start: Double = 0) {
        self.configuration = configuration
        scale = DecayScale(reference: start, rate: configuration.decayPerSecond)
        exposure = Array(repeating: 0, count: HourOfWeek.count)
        sessionsAll = Array(repeating: 0, count: HourOfWeek.count)
    }

    @inline(__always)
    static func pairKey(_ x: Int32, _ y: Int32) -> UInt64 {
        UInt64(UInt32(bitPattern: x)) << 32 | UInt64(UInt32(bitPattern: y))
    }

    /// Learns from one event. Events should come in time order; a late event is still counted.
    ///
    /// `state` events (device conditions) are ignored: they say nothing about when apps are used.
    public mutating func observe(_ event: DeviceEvent) {
        guard event.kind != .state else { return }
        let t = event.time
        let tau = configuration.tau
        if lastEventTime == nil { scale.reference = t }
        rescaleIfNeeded(at: t)
        let w = scale.weight(at: t)
        eventCount += 1
        if event.kind != .publish {
            if let last = lastEventTime, t > last, t - last <= configuration.exposureGapHours * 3600 {
                let offset = event.utcOffsetSeconds
                HourOfWeek.spread(from: last, to: t, offset: offset) { slot, seconds in exposure[slot] += seconds * w }
            }
            if lastEventTime.map({ t > $0 }) ?? true { lastEventTime = t }
            lastOffset = event.utcOffsetSeconds
        }
        switch event.kind {
        case .launch:
            var state = apps[event.app] ?? AppState()
            let isSession = state.lastLaunch.map { t - $0 > tau } ?? true
            habitLog.launched(at: t + Double(event.utcOffsetSeconds), app: event.app, isSession: isSession)
            pickupLog.launched(
                at: t + Double(event.utcOffsetSeconds), app: event.app, silence: lastLaunchAny.map { t - $0 }, tau: tau)
            if isSession {
                let slot = HourOfWeek.slot(t, offset: event.utcOffsetSeconds)
                state.sessions[slot] += w
                state.sessionTotal += w
                sessionsAll[slot] += w
                for r in recent where r.app != event.app && t - r.time <= tau && t - r.time >= Self.triggerDelay {
                    pairSuccesses.add(r.weight, to: Self.pairKey(r.app, event.app))
                    // The trial that launch r made for this app succeeded. This app was not
                    // launched since r (else this would not be a session start), so its time
                    // since last launch at r is r.time − lastLaunch.
                    if let last = state.lastLaunch {
                        let bin = ResponseBins.bin(sinceLast: r.time - last, tau: tau) + r.idle
                        state.responseSuccesses[bin] += r.weight
                        responseSuccessesAll[bin] += r.weight
                    }
                }
            }
            // This launch is a trial for every other app: will its session start within τ?
            // Counted in place (no hashing, no allocation): the cost is O(apps of the device).
            let idle = ResponseBins.idleOffset(sinceAnyLaunch: lastLaunchAny.map { t - $0 }, tau: tau)
            lastLaunchAny = t
            var i = apps.startIndex
            while i != apps.endIndex {
                if apps[i].key != event.app, let last = apps.values[i].lastLaunch {
                    let bin = ResponseBins.bin(sinceLast: t - last, tau: tau) + idle
                    apps.values[i].responseTrials[bin] += w
                    responseTrialsAll[bin] += w
                }
                i = apps.index(after: i)
            }
            if let last = state.lastLaunch, t >= last {
                let bin = GapBins.bin(t - last, tau: tau)
                state.gaps[bin] += w
                gapsAll[bin] += w
            }
            state.launchTotal += w
            state.lastLaunch = t
            state.lastRefresh = t
            apps[event.app] = state
            triggerTrials[event.app, default: 0] += w
            recent.removeExpired(at: t, tau: tau)
            recent.append(RecentLaunch(time: t, app: event.app, weight: w, idle: idle))
        case .fetch:
            var state = apps[event.app] ?? AppState()
            state.lastFetch = max(state.lastFetch ?? t, t)
            apps[event.app] = state
            let day = LocalTime.day(time: t, utcOffsetSeconds: event.utcOffsetSeconds)
            if day == fetchDay { fetchesOnFetchDay += 1 } else if day > fetchDay ?? .min { (fetchDay, fetchesOnFetchDay) = (day, 1) }
            learnFetch(app: event.app, at: t, offset: event.utcOffsetSeconds, result: event.result ?? .failed, weight: w)
        case .publish:
            var c = content[event.app] ?? ContentState()
            if !c.fromPublishes {
                // Publishes are direct evidence: drop what fetch results suggested.
                c = ContentState()
                c.fromPublishes = true
            }
            if let last = c.lastPublish, t > last {
                HourOfWeek.spread(from: last, to: t, offset: lastOffset) { slot, seconds in c.exposure[slot] += seconds * w }
            }
            c.events[HourOfWeek.slot(t, offset: lastOffset)] += w
            c.lastPublish = max(c.lastPublish ?? t, t)
            content[event.app] = c
        case .state:
            break  // returned above
        }
    }

    /// Learns from a fetch result (the device's own fetch or one in the input trace).
    private mutating func learnFetch(app: Int32, at t: Double, offset: Int32, result: FetchResult, weight w: Double) {
        guard result != .failed else { return }
        var state = apps[app] ?? AppState()
        var c = content[app] ?? ContentState()
        if !c.fromPublishes, let since = state.lastRefresh, t > since {
            // Interval-censored evidence: `newData` says at least one item appeared in
            // (since, t]. Credit each slot with its expected count given the current rates,
            // λ_s·e_s / (1 − exp(−Σ λ·e)) — one online EM step — so a long interval does not
            // pretend only one item appeared (which would teach "always quiet").
            var pieces: [(slot: Int, seconds: Double, rate: Double)] = []
            var expected = 0.0
            let f = scale.readFactor(at: t)
            let prior = Self.contentPrior(c)
            HourOfWeek.spread(from: since, to: t, offset: offset) { slot, seconds in
                let rate = (Self.contentRateEvents(c.events, slot) * f + prior.events)
                    / (Self.contentRateEvents(c.exposure, slot) * f / 3600 + prior.hours)
                pieces.append((slot, seconds, rate))
                expected += rate * seconds / 3600
            }
            let norm = 1 - exp(-expected)
            for piece in pieces {
                c.exposure[piece.slot] += piece.seconds * w
                if result == .newData {
                    let share = norm > 1e-12 ? piece.rate * piece.seconds / 3600 / norm : piece.seconds / max(t - since, 1)
                    c.events[piece.slot] += w * share
                }
            }
        }
        if result == .newData { c.newData += 1 } else { c.noData += 1 }
        content[app] = c
        state.lastRefresh = t
        apps[app] = state
    }

    /// Takes the content learned by another model (publishes meant for every device) for the
    /// apps this model has no content evidence of yet: a device that appears later still knows
    /// what was published before it.
    public mutating func adoptContent(from other: DeviceModel) {
        for (app, state) in other.content where content[app] == nil { content[app] = state }
    }

    /// Records a refresh of an app's cache (a fetch) without content evidence.
    public mutating func noteRefresh(app: Int32, at time: Double) {
        var state = apps[app] ?? AppState()
        state.lastRefresh = max(state.lastRefresh ?? time, time)
        apps[app] = state
    }

    private mutating func rescaleIfNeeded(at t: Double) {
        guard scale.rate * (t - scale.reference) > 40 else { return }
        let f = scale.readFactor(at: t)
        for i in 0..<HourOfWeek.count {
            exposure[i] *= f
            sessionsAll[i] *= f
        }
        for key in apps.keys {
            apps[key]!.sessions = apps[key]!.sessions.map { $0 * f }
            apps[key]!.sessionTotal *= f
            apps[key]!.launchTotal *= f
            apps[key]!.gaps = apps[key]!.gaps.map { $0 * f }
            apps[key]!.responseTrials = apps[key]!.responseTrials.map { $0 * f }
            apps[key]!.responseSuccesses = apps[key]!.responseSuccesses.map { $0 * f }
        }
        gapsAll = gapsAll.map { $0 * f }
        responseTrialsAll = responseTrialsAll.map { $0 * f }
        responseSuccessesAll = responseSuccessesAll.map { $0 * f }
        for key in triggerTrials.keys { triggerTrials[key]! *= f }

        pairSuccesses.scale(by: f)
        for i in recent.indices { recent[i].weight *= f }
        for key in content.keys {
            content[key]!.events = content[key]!.events.map { $0 * f }
            content[key]!.exposure = content[key]!.exposure.map { $0 * f }
        }
        scale.reference = t
    }

    /// The apps the device has launched, most sessions first (ties by id).
    public var appsBySessions: [Int32] {
        apps.sorted { ($0.value.sessionTotal, $1.key) > ($1.value.sessionTotal, $0.key) }.map(\.key)
    }

    /// The first `limit` apps of ``appsBySessions`` without sorting every app: what `predict`
    /// asks on each query.
    /// - Complexity: O(apps × limit).
    public func appsBySessions(limit: Int) -> [Int32] {
        guard limit > 0 else { return [] }
        var top: [(total: Double, app: Int32)] = []
        top.reserveCapacity(limit + 1)
        for (app, state) in apps {
            let total = state.sessionTotal
            // Most sessions first, ties by id: the order of `appsBySessions`.
            var i = top.count
            while i > 0, total > top[i - 1].total || (total == top[i - 1].total && app < top[i - 1].app) { i -= 1 }
            guard i < limit else { continue }
            top.insert((total, app), at: i)
            if top.count > limit { top.removeLast() }
        }
        return top.map(\.app)
    }

    /// When the app was last launched.
    public func lastLaunch(of app: Int32) -> Double? { apps[app]?.lastLaunch }

    /// When the app's cache was last refreshed (launch or fetch).
    public func lastRefresh(of app: Int32) -> Double? { apps[app]?.lastRefresh }

    /// The latest instant the model has seen: its last event or the last publish it learned
    /// from (publishes do not move ``lastEventTime``).
    public var lastObservedTime: Double? {
        var latest = lastEventTime
        for c in content.values { if let p = c.lastPublish { latest = max(latest ?? p, p) } }
        return latest
    }

    /// When the app was last fetched (any result).
    public func lastFetch(of app: Int32) -> Double? { apps[app]?.lastFetch }

    /// Fetches observed on local day `day` (0 unless it is the day of the latest fetch).
    public func fetches(onDay day: Int) -> Int { day == fetchDay ? fetchesOnFetchDay : 0 }

    /// Hours the device was observed (present-day weight) at `now`.
    public func observedHours(at now: Double) -> Double {
        exposure.reduce(0, +) * scale.readFactor(at: now) / 3600
    }
}
