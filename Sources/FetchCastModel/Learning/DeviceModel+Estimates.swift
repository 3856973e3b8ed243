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
    public func sessionRate(app: Int32, slot: Int, now: Double, prior: DevicePrior) -> Double {
        let f = scale.readFactor(at: now)
        let m = configuration.priorHours
        let e = smoothed(exposure, slot) * f / 3600
        let c = apps[app].map { smoothed($0.sessions, slot) * f } ?? 0
        return (c + m * priorRate(app: app, slot: slot, now: now, prior: prior)) / (e + m)
    }

    /// The prior rate for an app and slot: the device's all-app rate times the app's share of
    /// the device's sessions, blended with the population's rate for the app by how much the
    /// device has seen of the app.
    public func priorRate(app: Int32, slot: Int, now: Double, prior: DevicePrior) -> Double {
        let f = scale.readFactor(at: now)
        let m = configuration.priorHours
        let e = smoothed(exposure, slot) * f / 3600
        let allRate = (smoothed(sessionsAll, slot) * f + m * prior.globalRates[slot]) / (e + m)
        let appSessions = (apps[app]?.sessionTotal ?? 0) * f
        let allSessions = sessionsAll.reduce(0, +) * f
        let popShare = prior.appRates[app].map { rates in
            rates.reduce(0, +) / max(prior.globalRates.reduce(0, +), 1e-9)
        } ?? 0.05
        let share = (appSessions + 2 * popShare) / (allSessions + 2)
        let own = share * allRate
        guard let pop = prior.appRates[app] else { return own }
        let w = appSessions / (appSessions + 10)
        return w * own + (1 - w) * pop[slot]
    }

    /// P(a session of `app` starts in `(from, to]`), from the hour-of-week rates.
    public func sessionProbability(app: Int32, from start: Double, to end: Double, now: Double, prior: DevicePrior) -> Double {
        var expected = 0.0
        HourOfWeek.spread(from: start, to: end, offset: lastOffset) { slot, seconds in
            expected += sessionRate(app: app, slot: slot, now: now, prior: prior) * seconds / 3600
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
        var expected = 0.0
        HourOfWeek.spread(from: since, to: time, offset: lastOffset) { slot, seconds in
            let events = smoothedContent(c.events, slot) * f
            let hours = smoothedContent(c.exposure, slot) * f / 3600
            expected += (events + 0.05) / (hours + 0.1) * seconds / 3600
        }
        return 1 - exp(-expected)
    }

    /// Content rates are smoothed over neighbouring hours only: publication schedules are sharp.
    @inline(__always)
    private func smoothedContent(_ a: [Double], _ s: Int) -> Double {
        a[s] + 0.25 * (a[(s + 167) % 168] + a[(s + 1) % 168])
    }

    /// New content per hour for an app by hour of week (nil without content evidence).
    public func contentRates(app: Int32, now: Double) -> [Double]? {
        guard let c = content[app], c.fromPublishes || c.newData + c.noData >= 3 else { return nil }
        let f = scale.readFactor(at: now)
        return (0..<HourOfWeek.count).map { s in
            (smoothedContent(c.events, s) * f + 0.05) / (smoothedContent(c.exposure, s) * f / 3600 + 0.1)
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
        for key in pairSuccesses.keys {
            let x = Int32(bitPattern: UInt32(key >> 32)), y = Int32(bitPattern: UInt32(truncatingIfNeeded: key))
            let trials = (triggerTrials[x] ?? 0) * f
            guard trials >= minimumTrials else { continue }
            out.append((x, y, coUsageProbability(from: x, to: y, now: now, prior: prior), trials))
        }
        return Array(out.sorted { ($0.2, $1.0, $1.1) > ($1.2, $0.0, $0.1) }.prefix(limit))
    }
}
