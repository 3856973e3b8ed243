import Foundation

extension DeviceModel {
    /// The value of a 168-slot array smoothed over neighbouring hours and the same hour on the
    /// other days of the same kind (weekday or weekend).
    @inline(__always)
    func smoothed(_ a: [Double], _ s: Int) -> Double {
        let hour = s % 24, day = s / 24
        var v = a[s] + configuration.neighbourHourWeight * (a[(s + 167) % 168] + a[(s + 1) % 168])
        let weekend = day >= 5
        var sum = 0.0
        var n = 0.0
        for d in 0..<7 where d != day && (d >= 5) == weekend {
            sum += a[d * 24 + hour]
            n += 1
        }
        if n > 0 { v += configuration.sameHourOtherDaysWeight * sum / n }
        return v
    }

    /// Expected session starts of `app` per hour in hour-of-week `slot`, at `now`.
    ///
    /// `(c + m·π) / (e + m)`: the device's smoothed, recency-weighted session count `c` over its
    /// smoothed observed hours `e`, shrunk with `m` = ``ModelConfiguration/priorHours`` toward
    /// the prior rate `π` (see ``priorRate(app:slot:now:prior:)``).
    /// - Complexity: O(168) (sums over the week); ``sessionRateTerms(app:now:prior:)`` shares
    ///   them between slots.
    public func sessionRate(app: Int32, slot: Int, now: Double, prior: DevicePrior) -> Double {
        sessionRateTerms(app: app, now: now, prior: prior).rate(slot, of: self, prior: prior)
    }

    /// The prior rate for an app and slot: the device's all-app rate times the app's share of
    /// the device's sessions, blended with the population's rate for the app by how much the
    /// device has seen of the app.
    public func priorRate(app: Int32, slot: Int, now: Double, prior: DevicePrior) -> Double {
        sessionRateTerms(app: app, now: now, prior: prior).priorRate(slot, of: self, prior: prior)
    }

    /// What ``sessionRate(app:slot:now:prior:)`` needs of an app at `now` in every slot (the
    /// recency factor, the app's share of the device's sessions, its weight against the
    /// population's rate), computed once: a slot's rate is then O(1) and, operation for
    /// operation, what the one-slot call computes.
    func sessionRateTerms(app: Int32, now: Double, prior: DevicePrior) -> SessionRateTerms {
        let f = scale.readFactor(at: now)
        let appSessions = (apps[app]?.sessionTotal ?? 0) * f
        let allSessions = sessionsAll.reduce(0, +) * f
        let pop = prior.appRates[app]
        let popShare = pop.map { rates in rates.reduce(0, +) / max(prior.globalRates.reduce(0, +), 1e-9) } ?? 0.05
        return SessionRateTerms(
            factor: f, share: (appSessions + 2 * popShare) / (allSessions + 2), ownWeight: appSessions / (appSessions + 10),
            population: pop, sessions: apps[app]?.sessions)
    }

    /// P(a session of `app` starts in `(from, to]`), from the hour-of-week rates.
    public func sessionProbability(app: Int32, from start: Double, to end: Double, now: Double, prior: DevicePrior) -> Double {
        let terms = sessionRateTerms(app: app, now: now, prior: prior)
        var expected = 0.0
        HourOfWeek.spread(from: start, to: end, offset: lastOffset) { slot, seconds in
            expected += terms.rate(slot, of: self, prior: prior) * seconds / 3600
        }
        return 1 - exp(-expected)
    }

    /// P(a session of `y` starts within τ after a launch of `x`), shrunk toward the population
    /// pair probability (or, without one, toward `y`'s average chance in any τ window).
    public func coUsageProbability(from x: Int32, to y: Int32, now: Double, prior: DevicePrior) -> Double {
        let f = scale.readFactor(at: now)
        let trials = (triggerTrials[x] ?? 0) * f
        let successes = (pairSuccesses[Self.pairKey(x, y)] ?? 0) * f
        let base = prior.pairs[Self.pairKey(x, y)] ?? averageWindowProbability(app: y, now: now, prior: prior)
        let m = configuration.coUsagePriorTrials
        return (successes + m * base) / (trials + m)
    }

    /// `y`'s chance of a session in a τ window at an average observed hour.
    func averageWindowProbability(app: Int32, now: Double, prior: DevicePrior) -> Double {
        let f = scale.readFactor(at: now)
        let hours = exposure.reduce(0, +) * f / 3600
        let sessions = (apps[app]?.sessionTotal ?? 0) * f
        let rate = (sessions + 0.1) / (hours + 24)
        return 1 - exp(-rate * configuration.tau / 3600)
    }

    /// P(a fetch of `app` at `time` returns new data), given its cache was last refreshed at
    /// `since`: `1 − exp(−∫ μ)` over the learned new-content rate μ by hour of week. Apps with
    /// no content evidence (fewer than 3 fetch results and no publishes) are assumed to change.
    public func newDataProbability(app: Int32, at time: Double, since: Double?, now: Double) -> Double {
        guard let c = content[app], c.fromPublishes || c.newData + c.noData >= 3 else { return 1 }
        guard let since, time > since else { return 0 }
        let f = scale.readFactor(at: now)
        let prior = Self.contentPrior(c)
        var expected = 0.0
        HourOfWeek.spread(from: since, to: time, offset: lastOffset) { slot, seconds in
            let events = smoothedContent(c.events, slot) * f
            let hours = smoothedContent(c.exposure, slot) * f / 3600
            expected += (events + prior.events) / (hours + prior.hours) * seconds / 3600
        }
        return 1 - exp(-expected)
    }

    /// Content rates are pooled with the same hour on the other six days but not smoothed
    /// across hours: publication schedules are sharp (a desk that stops at 23:00 publishes
    /// nothing at 23:30), and fetch-result evidence is already spread over its interval.
    @inline(__always)
    private func smoothedContent(_ a: [Double], _ s: Int) -> Double { Self.contentRateEvents(a, s) }

    /// A content array at a slot, pooled with the same hour on the other six days.
    @inline(__always)
    static func contentRateEvents(_ a: [Double], _ s: Int) -> Double {
        let hour = s % 24, day = s / 24
        var others = 0.0
        for d in 0..<7 where d != day { others += a[d * 24 + hour] }
        return a[s] + others / 6
    }

    /// The content rate's prior, as (pseudo-items, pseudo-hours) per slot. Publishes observe the
    /// feed directly: a weak prior (0.02 items an hour) lets a few silent nights make night
    /// fetches pointless. Fetch results only exist where the policy fetched, so a weak prior
    /// would talk it out of fetching before it learned anything (the rate starts low, fewer
    /// fetches, no evidence to raise it): there the prior is 1 item an hour.
    static func contentPrior(_ c: ContentState) -> (events: Double, hours: Double) {
        c.fromPublishes ? (0.01, 0.5) : (0.5, 0.5)
    }

    /// New content per hour for an app by hour of week (nil without content evidence).
    public func contentRates(app: Int32, now: Double) -> [Double]? {
        guard let c = content[app], c.fromPublishes || c.newData + c.noData >= 3 else { return nil }
        let f = scale.readFactor(at: now)
        let prior = Self.contentPrior(c)
        return (0..<HourOfWeek.count).map { s in
            (smoothedContent(c.events, s) * f + prior.events) / (smoothedContent(c.exposure, s) * f / 3600 + prior.hours)
        }
    }

    /// Observations behind an estimate: present-day weighted observed hours of a slot.
    public func observedHours(slot: Int, now: Double) -> Double {
        exposure[slot] * scale.readFactor(at: now) / 3600
    }

    /// Present-day weighted session starts of an app in a slot (before smoothing).
    public func sessionCount(app: Int32, slot: Int, now: Double) -> Double {
        (apps[app]?.sessions[slot] ?? 0) * scale.readFactor(at: now)
    }

    /// The strongest co-usage pairs: (x, y, probability, present-day trigger launches).
    public func strongestPairs(limit: Int, now: Double, prior: DevicePrior, minimumTrials: Double = 5) -> [(Int32, Int32, Double, Double)] {
        let f = scale.readFactor(at: now)
        var out: [(Int32, Int32, Double, Double)] = []
        pairSuccesses.forEach { key, _ in
            let x = Int32(bitPattern: UInt32(key >> 32)), y = Int32(bitPattern: UInt32(truncatingIfNeeded: key))
            let trials = (triggerTrials[x] ?? 0) * f
            guard trials >= minimumTrials else { return }
            out.append((x, y, coUsageProbability(from: x, to: y, now: now, prior: prior), trials))
        }
        return Array(out.sorted { ($0.2, $1.0, $1.1) > ($1.2, $0.0, $0.1) }.prefix(limit))
    }
}

extension DeviceModel {
    /// P(the next launch of `app` falls in `(start, start + τ]`) given none since its last
    /// launch, from the app's launch-gap distribution (shrunk toward the device's gaps over all
    /// apps), modulated by the hour-of-week rate in that window relative to the app's average
    /// (proportional hazards). `nil` when the app was never launched or its last launch is so
    /// long before (over 14 days) that its gaps say nothing.
    public func returnProbability(app: Int32, from start: Double, now: Double, prior: DevicePrior, averageRate: Double? = nil) -> Double? {
        returnProbability(outlook(app: app, now: now, prior: prior, averageRate: averageRate), from: start, prior: prior)
    }

    /// ``returnProbability(app:from:now:prior:averageRate:)`` from an ``AppOutlook``: what a
    /// planner asks for many windows of one app.
    func returnProbability(_ o: AppOutlook, from start: Double, prior: DevicePrior) -> Double? {
        guard let last = o.lastLaunch, start >= last, o.gapTotal > 0 else { return nil }
        let tau = configuration.tau
        let delta = start - last
        // Beyond the gaps the bins tell apart (14 days): the gaps say nothing, the hours do.
        guard delta + tau < GapBins.span else { return nil }
        let s1 = o.gaps.survival(delta)
        let s2 = o.gaps.survival(delta + tau)
        guard s1 > 1e-9 else { return 0 }
        let p = max(0, min(1, (s1 - s2) / s1))
        // Time-of-day modulation: the window's rate against the app's average over the week.
        var windowRate = 0.0
        HourOfWeek.spread(from: start, to: start + tau, offset: lastOffset) { slot, seconds in
            windowRate += rate(o, slot: slot, prior: prior) * seconds / tau
        }
        let m = max(0.05, min(5, windowRate / max(o.averageRate, 1e-9)))
        return 1 - pow(1 - min(p, 0.999_999), m)
    }

    /// What the model says of one app at `now`, gathered once.
    /// - Parameter averageRate: ``averageSessionRate(app:now:prior:)`` when the caller keeps it.
    func outlook(app: Int32, now: Double, prior: DevicePrior, averageRate: Double? = nil) -> AppOutlook {
        let state = apps[app]
        var counts = Array(repeating: 0.0, count: GapBins.count)
        var total = 0.0
        if let state {
            let f = scale.readFactor(at: now)
            let pooledTotal = gapsAll.reduce(0, +)
            let pseudo = 5.0
            for i in 0..<GapBins.count {
                counts[i] = state.gaps[i] * f + (pooledTotal > 0 ? pseudo * gapsAll[i] / pooledTotal : 0)
                total += counts[i]
            }
        }
        let terms = sessionRateTerms(app: app, now: now, prior: prior)
        let average = averageRate ?? terms.averageRate(of: self, prior: prior)
        let gaps = GapSurvival(counts: counts, total: total, tau: configuration.tau)
        return AppOutlook(app: app, now: now, lastLaunch: state?.lastLaunch, gaps: gaps,
                          activity: Self.activity(gaps: gaps, silentFor: state?.lastLaunch.map { max(0, min(now, lastEventTime ?? now) - $0) }),
                          averageRate: average, rateTerms: terms)
    }

    /// How much of the app's usual use to expect after it has been silent for `silence`
    /// seconds: P(a launch within the next ``activityWindow`` | silent so long) over the same
    /// chance right after a launch, at most 1, from the app's launch gaps (1 when they say
    /// nothing). A silence longer than the bins tell apart (14 days and more) counts as the
    /// longest they do: an app used daily and silent for three weeks has stopped (until 0.6 it
    /// counted as 1, so such an app was fetched at its old hours again after two weeks). An app
    /// unused for days is, for now, not used at its usual hours: a forecast from the hour-of-week
    /// rates alone, or from its habit, is scaled by this. The silence counts until the device's
    /// last event, not beyond: a device not heard from says nothing of its apps.
    static func activity(gaps: GapSurvival, silentFor silentTime: Double?) -> Double {
        guard let silentTime, gaps.total > 0 else { return 1 }
        let silence = min(silentTime, GapBins.span - activityWindow - 1)
        let usual = 1 - gaps.survival(activityWindow)
        guard usual > 0 else { return 1 }
        let still = gaps.survival(silence)
        let now = still > 1e-9 ? 1 - gaps.survival(silence + activityWindow) / still : 0
        return max(0, min(1, now / usual))
    }

    /// The look-ahead of ``activity(gaps:silentFor:)``: a day (12 h and 2 days gave the same
    /// hit rates on the tuning users; docs/model.md).
    static let activityWindow = 86_400.0

    /// The session rate of the outlook's app in `slot`.
    @inline(__always)
    func rate(_ o: AppOutlook, slot: Int, prior: DevicePrior) -> Double {
        o.rateTerms.rate(slot, of: self, prior: prior)
    }
}

/// What a ``DeviceModel`` says of one app at one instant, gathered once so that valuing many
/// moments of it is cheap (``DeviceModel/fetchValue(_:at:refreshed:newData:trigger:prior:liftWeight:)``).
struct AppOutlook {
    var app: Int32
    /// When it was gathered: what the estimates know.
    var now: Double
    var lastLaunch: Double?
    /// The app's launch-gap distribution, shrunk toward the device's.
    var gaps: GapSurvival
    var gapTotal: Double { gaps.total }
    /// ``DeviceModel/activity(gaps:silentFor:)`` at `now`: the share of the usual hour-of-week
    /// rates to expect after the app's present silence.
    var activity: Double
    /// The app's session rate per hour averaged over the week.
    var averageRate: Double
    /// What its session rate in any slot needs.
    var rateTerms: SessionRateTerms
}

extension DeviceModel {
    /// The app's session rate per hour averaged over the 168 hours of the week.
    /// - Complexity: O(168); callers on a hot path cache it (it moves slowly).
    public func averageSessionRate(app: Int32, now: Double, prior: DevicePrior) -> Double {
        sessionRateTerms(app: app, now: now, prior: prior).averageRate(of: self, prior: prior)
    }
}

extension DeviceModel {
    /// P(a session of `app` starts within τ after a launch of another app at `time`), by how
    /// long ago `app` was last launched, shrunk toward the same bin pooled over all apps; then
    /// scaled in odds by the lift of the specific trigger app (co-usage) when given.
    public func responseProbability(app: Int32, at time: Double, after trigger: Int32?, triggerTime: Double, now: Double, prior: DevicePrior, liftWeight: Double = 0.5) -> Double {
        let tau = configuration.tau
        let bin = ResponseBins.bin(sinceLast: apps[app]?.lastLaunch.map { triggerTime - $0 }, tau: tau)
            + ResponseBins.idleOffset(sinceAnyLaunch: previousLaunchAny(before: triggerTime).map { triggerTime - $0 }, tau: tau)
        let f = scale.readFactor(at: now)
        let pooled = (responseSuccessesAll[bin] * f + 0.05) / (responseTrialsAll[bin] * f + 1)
        let own = apps[app]
        let s = (own?.responseSuccesses[bin] ?? 0) * f
        let n = (own?.responseTrials[bin] ?? 0) * f
        let m = 10.0
        var p = (s + m * pooled) / (n + m)
        if let x = trigger, liftWeight > 0 {
            let totalS = (own?.responseSuccesses.reduce(0, +) ?? 0) * f
            let totalN = (own?.responseTrials.reduce(0, +) ?? 0) * f
            let anyTrigger = (totalS + 0.5) / (totalN + 5)
            let pair = coUsageProbability(from: x, to: app, now: now, prior: prior)
            let lift = max(0.05, min(20, pair / max(anyTrigger, 1e-6)))
            let odds = p / max(1 - p, 1e-9) * pow(lift, liftWeight)
            p = odds / (1 + odds)
        }
        return max(0, min(1, p))
    }
}

extension DeviceModel {
    /// The latest launch of any app strictly before `time` among those remembered (the last τ).
    func previousLaunchAny(before time: Double) -> Double? {
        recent.latest(before: time)
    }
}

extension DeviceModel {
    /// ``sessionRate(app:slot:now:prior:)`` for all 168 slots at once, sharing the sums that
    /// every slot's prior needs: what a planner evaluates thousands of windows against.
    /// - Complexity: O(168).
    public func sessionRates(app: Int32, now: Double, prior: DevicePrior) -> [Double] {
        let terms = sessionRateTerms(app: app, now: now, prior: prior)
        return (0..<HourOfWeek.count).map { terms.rate($0, of: self, prior: prior) }
    }

    /// P(a session starts in `(start, end]`) from precomputed ``sessionRates(app:now:prior:)``.
    public func sessionProbability(rates: [Double], from start: Double, to end: Double) -> Double {
        var expected = 0.0
        HourOfWeek.spread(from: start, to: end, offset: lastOffset) { slot, seconds in
            expected += rates[slot] * seconds / 3600
        }
        return 1 - exp(-expected)
    }
}

/// What every slot's ``DeviceModel/sessionRate(app:slot:now:prior:)`` shares for one app at one
/// instant (``DeviceModel/sessionRateTerms(app:now:prior:)``).
struct SessionRateTerms {
    /// The recency factor at the instant.
    var factor: Double
    /// The app's share of the device's sessions, shrunk toward its share of the population's.
    var share: Double
    /// The weight of the device's own rate against the population's rate for the app.
    var ownWeight: Double
    /// The population's rates of the app by slot, when it knows the app.
    var population: [Double]?
    /// The device's own session counts of the app by slot, when it has seen it.
    var sessions: [Double]?

    /// ``DeviceModel/priorRate(app:slot:now:prior:)`` in `slot`.
    @inline(__always)
    func priorRate(_ slot: Int, of model: DeviceModel, prior: DevicePrior) -> Double {
        let m = model.configuration.priorHours
        let e = model.smoothed(model.exposure, slot) * factor / 3600
        let allRate = (model.smoothed(model.sessionsAll, slot) * factor + m * prior.globalRates[slot]) / (e + m)
        let own = share * allRate
        guard let pop = population else { return own }
        return ownWeight * own + (1 - ownWeight) * pop[slot]
    }

    /// ``DeviceModel/averageSessionRate(app:now:prior:)``.
    func averageRate(of model: DeviceModel, prior: DevicePrior) -> Double {
        var total = 0.0
        for slot in 0..<HourOfWeek.count { total += rate(slot, of: model, prior: prior) }
        return total / Double(HourOfWeek.count)
    }

    /// ``DeviceModel/sessionRate(app:slot:now:prior:)`` in `slot`.
    @inline(__always)
    func rate(_ slot: Int, of model: DeviceModel, prior: DevicePrior) -> Double {
        let m = model.configuration.priorHours
        let e = model.smoothed(model.exposure, slot) * factor / 3600
        let c = sessions.map { model.smoothed($0, slot) * factor } ?? 0
        return (c + m * priorRate(slot, of: model, prior: prior)) / (e + m)
    }
}
