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
    /// The device's usual conditions at `time` that the plan counted on (a moment beyond τ of
    /// the plan's start, planned on Wi-Fi or external power because the device usually is then);
    /// `nil` otherwise.
    public var habit: ConditionHabit? = nil
}

/// A usual condition a planned fetch counts on: what its reason adds.
public enum ConditionHabit: Sendable, Hashable {
    /// Usually on Wi-Fi at the fetch's hour of the week (`hour`: its local hour of the day),
    /// this share of the time.
    case wifi(share: Double, hour: Int)
    /// Usually on external power at the fetch's hour of the week, this share of the time.
    case charging(share: Double, hour: Int)

    /// "usually on Wi-Fi 19:00–20:00 (82% of the time)": the share is the device's on that
    /// weekday's hour.
    public var description: String {
        func at(_ hour: Int) -> String {
            func hh(_ h: Int) -> String { (h < 10 ? "0" : "") + "\(h):00" }
            return hh(hour) + "–" + hh((hour + 1) % 24)
        }
        func share(_ p: Double) -> String { "\(Int((p * 100).rounded()))% of the time" }
        switch self {
        case .wifi(let p, let hour): return "usually on Wi-Fi \(at(hour)) (\(share(p)))"
        case .charging(let p, let hour): return "usually charging \(at(hour)) (\(share(p)))"
        }
    }
}

/// What a plan knows of the device's conditions: those at its start, and when the device is
/// usually on Wi-Fi and charging (learned from the `state` rows up to the start).
public struct PlanConditions: Sendable, Hashable {
    /// The conditions at the plan's start.
    public var current: DeviceConditions
    /// The habits, counted up to the plan's start (``ConditionHabits/through(_:)``).
    public var habits: ConditionHabits

    /// Creates what a plan knows.
    public init(current: DeviceConditions, habits: ConditionHabits) {
        self.current = current
        self.habits = habits
    }
}

/// Plans the next fetches of a device ahead of time: the scheduler's second driver (`fetchcast
/// predict`, `fetchcast serve`, the `planned` policy of `fetchcast evaluate`, an app scheduling
/// its next `BGAppRefreshTask`). The live driver is ``LearnedPolicy``.
///
/// Both value a fetch with the one valuation,
/// ``DeviceModel/fetchValue(app:at:now:refreshed:trigger:prior:liftWeight:averageRate:)``, and keep
/// the same rules (⌊budget⌋ a local day counting the fetches already made that day, the minimum
/// interval per app, the minimum value, `notBefore`, coalescing by
/// ``SchedulerConfiguration/coalesceFraction``). They differ where they must: a plan cannot react
/// to a launch that has not happened, so it values a grid of moments ahead from what is known
/// at its start (reacting only to a launch just before it, like a live policy right after one),
/// and it spends the day's cap on its best forecasts instead of pacing against a bar learned
/// from past opportunities; it carries no outcome factor (that needs the live policy's own
/// forecasts and outcomes).
public enum FetchPlanner {
    /// The spacing of the moments a plan values, seconds.
    public static let step = 300.0

    /// Plans fetches in `[from, from + horizon)` from what `model` knows (the events before
    /// `from`). Ties between apps go by their order in `apps` (a plan does not depend on how
    /// apps are numbered); the plan is in time order, then that order.
    ///
    /// Candidates are `from` itself and every ``step`` after it, per app, each valued with the one
    /// valuation (at `from`, reacting to a launch at most 2 s earlier, as the live policy does one
    /// second after a launch). The best are taken greedily, at most ⌊budget⌋ per local day (less
    /// the fetches the model saw that day), none within the minimum interval of the app's
    /// previous fetch or within max(τ, minimum interval) of another planned fetch of the same app,
    /// none below the minimum value, none before `notBefore`. Each planned fetch then refreshes
    /// the cache for the next one of its app (its chance of new data is recomputed from it, and it
    /// is dropped below the minimum value), and a fetch less than 10 minutes after another app's
    /// planned fetch joins that radio wakeup when it keeps ``SchedulerConfiguration/coalesceFraction``
    /// of its value there.
    ///
    /// With `conditions` (the device has `state` rows), each moment is planned under the conditions
    /// it will most likely meet (``ConditionHabits/expected(at:now:current:horizon:utcOffsetSeconds:)``:
    /// those at the start for the first τ, the usual ones of its hour of the week after): it must
    /// clear the minimum value × ``SchedulerConfiguration/barFactor(_:habits:at:utcOffsetSeconds:)``
    /// there (the live policy's rule, with the plan's minimum value for the bar): a plan takes
    /// lesser moments on Wi-Fi, more so just before the device usually leaves it, and fewer on
    /// a metered network on battery. `admits` is asked with those expected conditions.
    ///
    /// - Complexity: O(apps × (168 + horizon / ``step``)) valuations plus a sort.
    public static func plan(
        model: DeviceModel, apps: [Int32], from start: Double, horizon: Double = 86_400,
        configuration: SchedulerConfiguration, prior: DevicePrior, conditions: PlanConditions? = nil,
        admits: ((_ app: Int32, _ time: Double, _ conditions: DeviceConditions) -> Bool)? = nil
    ) -> [ScheduledFetch] {
        let tau = model.configuration.tau
        let begin = max(start, configuration.notBefore ?? start)
        let offset = model.lastOffset
        let trigger = model.trigger(at: begin)
        // Ties go by the apps' order in `apps`, never by their ids: a store and a replay number
        // apps differently, and must plan alike.
        struct Candidate {
            var app: Int32; var rank: Int; var time: Double; var valuation: FetchValuation
            /// The bar's factor under the moment's expected conditions (1 without conditions).
            var factor = 1.0
            var habit: ConditionHabit?
        }
        // The least value a moment may be planned at, under its expected conditions.
        func leastValue(_ factor: Double) -> Double {
            conditions == nil ? configuration.planMinimumValue : max(configuration.minimumValue, configuration.planMinimumValue * factor)
        }
        // The conditions a moment will most likely meet (unknown without conditions), and whether
        // the app may be fetched there.
        func expectedConditions(_ t: Double) -> DeviceConditions {
            conditions.map { $0.habits.expected(at: t, now: start, current: $0.current, horizon: tau, utcOffsetSeconds: offset) } ?? .unknown
        }
        func admitted(_ app: Int32, _ t: Double) -> Bool { admits?(app, t, expectedConditions(t)) ?? true }
        // What a moment's expected conditions make of it: the conditions, the bar's factor there,
        // and the usual condition a fetch there counts on.
        struct Usual {
            var conditions: DeviceConditions
            var factor: Double
            var habit: ConditionHabit?
        }
        var usual = [Usual?](repeating: nil, count: HourOfWeek.count)
        func usualAt(_ g: Double, slot: Int, conditions: PlanConditions) -> Usual {
            let expected = expectedConditions(g)
            var habit: ConditionHabit?
            if g - start >= tau {
                if expected.isCharging, let p = conditions.habits.chargingShare(slot: slot) {
                    habit = .charging(share: p, hour: LocalTime.hourOfDay(time: g, utcOffsetSeconds: offset))
                } else if expected.isUnmetered, let p = conditions.habits.wifiShare(slot: slot) {
                    habit = .wifi(share: p, hour: LocalTime.hourOfDay(time: g, utcOffsetSeconds: offset))
                }
            }
            return Usual(
                conditions: expected, factor: configuration.barFactor(expected, habits: conditions.habits, at: g, utcOffsetSeconds: offset),
                habit: habit)
        }
        let leastFactor = conditions == nil ? 1 : min(1, configuration.cellularBarFactor, configuration.wifiBarFactor * configuration.leavingWiFiBarFactor)
        var candidates: [Candidate] = []
        candidates.reserveCapacity(apps.count * Int(horizon / step + 1))
        var outlooks: [Int32: AppOutlook] = [:]
        var refreshes: [Int32: Double] = [:]
        for (rank, app) in apps.enumerated() {
            // Everything per app is gathered once, not per candidate.
            let outlook = model.outlook(app: app, now: start, prior: prior, allRates: true)
            outlooks[app] = outlook
            // A refresh after `start` (planning from a time inside the history the model has
            // already seen) says nothing about the cache at `start`: planned as unknown.
            let refreshed = model.lastRefresh(of: app).flatMap { $0 <= start ? $0 : nil }
            refreshes[app] = refreshed
            let earliest = model.lastFetch(of: app).map { $0 + configuration.minimumInterval } ?? -.infinity
            let since = refreshed ?? start
            // P(new data) = 1 − exp(−∫ content rate since the last refresh): the integral grows
            // step by step instead of being summed from the refresh again for every candidate.
            let contentRates = model.contentRates(app: app, now: start)
            var expectedContent = 0.0
            var integratedUntil = since
            // Beyond τ from the start a moment is valued by the hour-of-week rates alone, so its
            // session chance is at most 1 − exp(−max rate of its (at most two) slots × τ): a
            // moment whose bound is under the floor is skipped unvalued (exactly: it could not
            // be a candidate).
            let rates = outlook.rates!
            let rateCut = tau <= 3600 ? -log(1 - min(leastValue(leastFactor), 0.999_999)) * 3600 / tau : .infinity
            var slot = HourOfWeek.slot(begin, offset: offset)
            var hourEnd = ((begin + Double(offset)) / 3600).rounded(.down) * 3600 + 3600 - Double(offset)
            var g = begin
            while g < start + horizon {
                defer { g += step }
                while g >= hourEnd {
                    slot = (slot + 1) % HourOfWeek.count
                    hourEnd += 3600
                }
                guard g >= earliest else { continue }
                if g - start > tau, max(rates[slot], rates[(slot + 1) % HourOfWeek.count]) < rateCut { continue }
                var expected = DeviceConditions.unknown
                var factor = 1.0
                var habit: ConditionHabit?
                if let conditions {
                    // Beyond τ the expected conditions, the factor and the habit depend on the
                    // moment's hour of the week only: worked out once per slot and plan.
                    let u: Usual
                    if g - start >= tau, let known = usual[slot] {
                        u = known
                    } else {
                        u = usualAt(g, slot: slot, conditions: conditions)
                        if g - start >= tau { usual[slot] = u }
                    }
                    (expected, factor, habit) = (u.conditions, u.factor, u.habit)
                }
                // A moment whose predicted conditions fail the app's constraints is never planned.
                if let admits, !admits(app, g, expected) { continue }
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
                let v = model.fetchValue(
                    outlook, at: g, refreshed: refreshed, newData: newData, trigger: trigger, prior: prior,
                    liftWeight: configuration.coUsageLiftWeight)
                if v.value >= leastValue(factor) {
                    candidates.append(Candidate(app: app, rank: rank, time: g, valuation: v, factor: factor, habit: habit))
                }
            }
        }
        // A total order (value, then earlier, then lower app id), so the generation order above
        // does not matter.
        candidates.sort { ($0.valuation.value, $1.time, $1.rank) > ($1.valuation.value, $0.time, $0.rank) }
        var chosen: [Candidate] = []
        var chosenTimes: [Int32: [Double]] = [:]
        var perDay: [Int: Int] = [:]
        let spacing = max(tau, configuration.minimumInterval)
        for c in candidates {
            let day = LocalTime.day(time: c.time, utcOffsetSeconds: offset)
            let used = perDay[day] ?? model.fetches(onDay: day)
            if used >= configuration.dailyCap { continue }
            if chosenTimes[c.app]?.contains(where: { abs($0 - c.time) < spacing }) == true { continue }
            chosen.append(c)
            chosenTimes[c.app, default: []].append(c.time)
            perDay[day] = used + 1
        }
        chosen.sort { ($0.time, $0.rank) < ($1.time, $1.rank) }
        // Each planned fetch refreshes the cache: the next one of the same app finds only what
        // appears after it. Values were computed against the last real refresh; recompute the
        // chance of new data from the previous planned fetch and drop the fetches that no
        // longer clear the minimum value (a quiet night after an evening fetch).
        var previous: [Int32: Double] = [:]
        var plan: [ScheduledFetch] = []
        for var c in chosen {
            if let since = previous[c.app] {
                c.valuation.newDataProbability = model.newDataProbability(app: c.app, at: c.time, since: since, now: start)
                guard c.valuation.launchProbability * c.valuation.newDataProbability >= leastValue(c.factor) else { continue }
            }
            previous[c.app] = c.time
            plan.append(ScheduledFetch(
                app: c.app, time: c.time, launchProbability: c.valuation.launchProbability,
                newDataProbability: c.valuation.newDataProbability, reason: c.valuation.reason, habit: c.habit))
        }
        // Coalesce: pull a fetch forward into an earlier wakeup of another app when little is lost.
        var refreshedAt: [Int32: Double] = [:]
        if let first = plan.first { refreshedAt[first.app] = first.time }
        var i = 1
        while i < plan.count {
            let earlier = plan[i - 1], later = plan[i]
            // Never across local midnight: the earlier day's cap may be spent.
            if later.app != earlier.app, later.time - earlier.time > 0, later.time - earlier.time < 600,
               LocalTime.day(time: earlier.time, utcOffsetSeconds: model.lastOffset)
                   == LocalTime.day(time: later.time, utcOffsetSeconds: model.lastOffset),
               model.lastFetch(of: later.app).map({ earlier.time - $0 >= configuration.minimumInterval }) ?? true,
               admitted(later.app, earlier.time)
            {
                let since = refreshedAt[later.app] ?? refreshes[later.app] ?? start
                let there = model.fetchValue(
                    outlooks[later.app]!, at: earlier.time, refreshed: refreshes[later.app],
                    newData: model.newDataProbability(app: later.app, at: earlier.time, since: since, now: start),
                    trigger: trigger, prior: prior, liftWeight: configuration.coUsageLiftWeight)
                if there.value >= configuration.coalesceFraction * later.launchProbability * later.newDataProbability {
                    plan[i] = ScheduledFetch(app: later.app, time: earlier.time, launchProbability: there.launchProbability,
                                             newDataProbability: there.newDataProbability, reason: .coalesced(with: earlier.app))
                }
            }
            refreshedAt[plan[i].app] = plan[i].time
            i += 1
        }
        joinWakeups(&plan, model: model, apps: apps, start: start, outlooks: outlooks, refreshes: refreshes, trigger: trigger,
                    configuration: configuration, prior: prior, admitted: admitted)
        return plan
    }

    /// Lets apps join the radio wakeups of the plan, as the live policy lets them join its
    /// wakeups: at each planned wakeup, an app not planned within the spacing around it joins
    /// when its value there is at least ``SchedulerConfiguration/coalesceFraction`` of the day's
    /// bar (the least value the plan took that day), the day's cap is not spent and `admitted`
    /// allows the app there.
    static func joinWakeups(
        _ plan: inout [ScheduledFetch], model: DeviceModel, apps: [Int32], start: Double, outlooks: [Int32: AppOutlook],
        refreshes: [Int32: Double], trigger: FetchTrigger?, configuration: SchedulerConfiguration, prior: DevicePrior,
        admitted: (Int32, Double) -> Bool
    ) {
        guard !plan.isEmpty else { return }
        let offset = model.lastOffset
        let spacing = max(model.configuration.tau, configuration.minimumInterval)
        var bar: [Int: Double] = [:]
        var used: [Int: Int] = [:]
        for f in plan {
            let day = LocalTime.day(time: f.time, utcOffsetSeconds: offset)
            bar[day] = min(bar[day] ?? .infinity, f.launchProbability * f.newDataProbability)
            used[day] = (used[day] ?? model.fetches(onDay: day)) + 1
        }
        var joined: [ScheduledFetch] = []
        var wakeups: [Double] = []
        for f in plan where wakeups.last != f.time { wakeups.append(f.time) }
        for w in wakeups {
            let day = LocalTime.day(time: w, utcOffsetSeconds: offset)
            guard let dayBar = bar[day] else { continue }
            let lead = plan.first { $0.time == w }!.app
            for app in apps {
                guard (used[day] ?? 0) < configuration.dailyCap else { break }
                if plan.contains(where: { $0.app == app && abs($0.time - w) < spacing }) { continue }
                if joined.contains(where: { $0.app == app && abs($0.time - w) < spacing }) { continue }
                if let last = model.lastFetch(of: app), w - last < configuration.minimumInterval { continue }
                guard let outlook = outlooks[app], admitted(app, w) else { continue }
                let since = plan.last(where: { $0.app == app && $0.time < w })?.time ?? refreshes[app]
                let v = model.fetchValue(
                    outlook, at: w, refreshed: refreshes[app],
                    newData: model.newDataProbability(app: app, at: w, since: since ?? start, now: start),
                    trigger: trigger, prior: prior, liftWeight: configuration.coUsageLiftWeight)
                guard v.value >= configuration.coalesceFraction * dayBar, v.value >= configuration.planMinimumValue / 2 else { continue }
                joined.append(ScheduledFetch(app: app, time: w, launchProbability: v.launchProbability,
                                             newDataProbability: v.newDataProbability, reason: .coalesced(with: lead)))
                used[day, default: 0] += 1
            }
        }
        guard !joined.isEmpty else { return }
        plan += joined
        let rank = Dictionary(apps.enumerated().map { ($1, $0) }, uniquingKeysWith: min)
        plan.sort { ($0.time, rank[$0.app] ?? 0) < ($1.time, rank[$1.app] ?? 0) }
    }
}
