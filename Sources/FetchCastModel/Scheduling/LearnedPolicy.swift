import FetchCastCore
import Foundation

/// FetchCast's scheduler: played live as `learned` in `fetchcast evaluate` (an OS, a launcher or
/// an SDK that sees every launch as it happens), and, following a device's events, the source of
/// every plan `fetchcast predict`, `fetchcast serve` and the `planned` policy answer
/// (``plan(from:horizon:notBefore:count:)``: what it would fetch if no further event came).
///
/// At every decision point — one second after each launch (the radio is awake and the next app
/// is often predictable), when an app's cache goes stale (τ after its last refresh), every
/// ``SchedulerConfiguration/checkInterval`` when set, and retries after a failure — it values
/// fetching each fetch-enabled app now as
///
///     value = P(a session of the app starts within τ) × P(the fetch finds new data)
///             × (share of the τ window not already fresh)
///
/// where the session chance is, right after a launch, the learned response to launches
/// (``DeviceModel/responseProbability(app:at:after:triggerTime:now:prior:liftWeight:)``), and
/// otherwise the return chance from the app's launch gaps modulated by the hour-of-week rate. It fetches the apps whose value clears the
/// ``BudgetPacer`` bar (best first, at most ⌊budget⌋ a local day, never the same app within
/// the minimum interval), and lets apps worth at least
/// ``SchedulerConfiguration/coalesceFraction`` of the bar (0.75 by default) join the same wakeup.
/// Told the device's conditions (`state` rows), it learns when the device is usually on Wi-Fi
/// (``ConditionHabits``) and scales the bar of a wakeup it would start by
/// ``SchedulerConfiguration/barFactor(_:habits:at:utcOffsetSeconds:)``: higher on a metered
/// network on battery, lower on Wi-Fi (lower still before an hour it is usually off Wi-Fi). On a
/// metered network on battery, once its forecasts of the device are labelled, it prices a wakeup
/// in sessions made fresh instead (``SchedulerConfiguration/cellularWakeupCost``).
public struct LearnedPolicy: FetchPolicy, Sendable {
    /// What the model has learned so far.
    public private(set) var model: DeviceModel
    /// The apps it may fetch for.
    public let apps: [Int32]
    var configuration: SchedulerConfiguration
    let prior: DevicePrior
    /// In a plan's run forward, the refreshes its fetches are assumed to make (kept apart from
    /// the model, so the run forward does not copy it).
    var assumedRefreshes: [Int32: Double] = [:]
    /// Whether it acts on its decisions or follows the fetches it is told of.
    public private(set) var mode: Mode
    var pacer: BudgetPacer
    var fetchesToday = 0
    var day: Int?
    var lastFetch: [Int32: Double] = [:]
    var pendingTrigger: Double?
    var nextCheck: Double?
    var retries: [Int32: Retry] = [:]
    /// When each app's cache goes stale (last refresh + τ): a natural moment to look again.
    var expiries: [Int32: Double] = [:]
    /// The start of each app's next habit window: a look ahead of it (``SchedulerConfiguration/anticipates``).
    var anticipations: [Int32: Double] = [:]
    /// Looks ahead of habits that the constraints refused, per app: until when (the end of the
    /// habit's window) a change of conditions that allows the app is a look
    /// (``LearnedPolicy/holdRefusedLook(_:at:until:)``).
    var heldLooks: [Int32: Double] = [:]
    /// Looks ahead of habits deferred from the start of their window on a metered network on
    /// battery, per app: the end of the window (``LearnedPolicy/deferCostlyLook(_:at:)``); the
    /// deferred look itself is in ``anticipations``.
    var deferredLooks: [Int32: Double] = [:]
    /// The next look before the device's first use after its present silence (the pickup
    /// clock, ``LearnedPolicy/lookBeforePickup(at:into:considered:reporting:)``).
    var pickupLook: Double?
    /// The instant of the latest look before a pickup: a fetch made then sets no look for its
    /// cache going stale (the next look before the pickup comes then).
    var lastPickupLook: Double?
    var averageRates: [Int32: AverageRate] = [:]

    /// The longest a retry waits after a failed fetch, seconds.
    static let maximumRetryDelay = 3600.0

    /// How long after a device's last event its scheduler may still have a look pending (a
    /// launch's reactive look, a cache going stale, a retry): a plan from later than that is
    /// empty, whatever the history. `nil` with periodic looks (``SchedulerConfiguration/checkInterval``).
    public static func pendingLooksEnd(configuration: SchedulerConfiguration, tau: Double) -> Double? {
        guard configuration.checkInterval == nil else { return nil }
        let reactive = max(tau, maximumRetryDelay) + DeviceModel.triggerDelay
        return configuration.anticipates ? max(reactive, configuration.anticipationSilence) : reactive
    }

    /// A retry due after failures in a row (`at` infinite once due and looked at).
    struct Retry: Sendable {
        var at: Double
        var failures: Int
    }

    /// An app's average session rate, worked out at `at` and kept 6 h.
    struct AverageRate: Sendable {
        var at: Double
        var rate: Double
    }
    /// How this device's outcomes compared with the values so far, per app.
    var calibration: ValueCalibration
    /// The device's conditions, once a `state` row said anything (`nil` before, and always
    /// when the configuration is not condition-aware: the policy then decides as a
    /// condition-blind one).
    var conditions: DeviceConditions?
    /// When the device is usually on Wi-Fi and charging, from the conditions it was told of.
    var habits = ConditionHabits()

    /// When the device is usually on Wi-Fi and charging, as learned from the `state` rows told
    /// so far (empty without any): what a plan's reasons say of the hours it fetches in.
    package var conditionHabits: ConditionHabits { habits }

    /// How the policy learns which fetches were made.
    public enum Mode: Sendable, Codable {
        /// It makes the fetches it decides on (the `learned` policy), and counts those.
        case live
        /// It is told of the fetches made — fetch events, its client's reports — and counts
        /// those. It still looks at every decision point the live policy would, in the same
        /// order (a look at an instant comes after that instant's publishes and `state` rows and
        /// before its launches and fetches), so its bar and outcome factor learn from the same
        /// moments; what it would fetch there is a plan's business
        /// (``LearnedPolicy/plan(from:horizon:notBefore:count:)``), never acted on.
        case following
    }

    /// Creates a policy.
    /// - Parameters:
    ///   - apps: The fetch-enabled apps.
    ///   - model: A model to start from (learned state), or a fresh one.
    ///   - configuration: Budget, minimum interval and the other constants.
    ///   - prior: What other devices say.
    ///   - mode: Live (acts on its decisions) or following (the source of plans).
    public init(apps: [Int32], model: DeviceModel, configuration: SchedulerConfiguration, prior: DevicePrior, mode: Mode = .live) {
        self.apps = apps
        self.model = model
        self.configuration = configuration
        self.prior = prior
        self.mode = mode
        pacer = BudgetPacer(memory: configuration.pacingMemory)
        calibration = ValueCalibration(tau: model.configuration.tau, outcomeFloor: configuration.minimumValue)
        // A model with history already has habits to look ahead of.
        if let last = model.lastEventTime {
            for app in apps { anticipate(app, after: last, now: last) }
            schedulePickupLook(now: last)
        }
    }

    /// Creates a policy for a replay from a ``DeviceContext``.
    package init(
        context: DeviceContext, model: ModelConfiguration = ModelConfiguration(), prior: DevicePrior = .none, conditionAware: Bool = true
    ) {
        var scheduler = SchedulerConfiguration(budget: context.budget)
        scheduler.conditionAware = conditionAware
        scheduler.minimumInterval = min(scheduler.minimumInterval, context.tau)
        scheduler.constraints = context.schedulerConstraints
        var modelConfiguration = model
        modelConfiguration.tau = context.tau
        self.init(apps: context.apps, model: DeviceModel(configuration: modelConfiguration), configuration: scheduler, prior: prior)
    }

    public var nextWakeup: Double? {
        var next = [pendingTrigger, nextCheck].compactMap { $0 }.min()
        for (_, r) in retries where r.at.isFinite { next = min(next ?? r.at, r.at) }
        for (_, e) in expiries { next = min(next ?? e, e) }
        for (_, a) in anticipations { next = min(next ?? a, a) }
        if let p = pickupLook { next = min(next ?? p, p) }
        if let nb = configuration.notBefore, let n = next { next = max(n, nb) }
        return next
    }

    /// The instants of the decision points pending — a launch's reactive look, caches going
    /// stale, retries, the next periodic look — each once, earliest first (`notBefore` aside).
    ///
    /// A look of a following policy changes what it would plan but adds no look of its own
    /// (unless ``SchedulerConfiguration/checkInterval`` is set), so for starts `T` between two
    /// of these instants, `(w₍ₖ₋₁₎, wₖ]`, ``plan(from:horizon:notBefore:count:)`` makes
    /// the same fetches as from `wₖ` (those before `T` + the horizon): what lets a device's plans
    /// for every start be computed ahead, one per instant.
    package var pendingLooks: [Double] {
        var looks = [pendingTrigger, nextCheck].compactMap { $0 }
        for (_, r) in retries where r.at.isFinite { looks.append(r.at) }
        looks += expiries.values
        looks += anticipations.values
        if let pickupLook { looks.append(pickupLook) }
        return Array(Set(looks)).sorted()
    }

    public mutating func observe(_ event: DeviceEvent) {
        if mode == .following {
            // The looks before this event, and those at its instant before a launch or a fetch
            // (``InstantOrder``: a publish at t comes before the looks at t).
            catchUp(through: event.time, inclusive: !InstantOrder.precedesLooks(event.kind))
            if event.kind == .fetch, let result = event.result {
                noteFetch(event, result: result)
                return
            }
        }
        var sessionStart = false
        if event.kind == .launch, apps.contains(event.app) {
            let previous = model.lastLaunch(of: event.app) ?? -.infinity
            sessionStart = event.time - previous > model.configuration.tau
            calibration.launched(event.app, at: event.time, sessionStart: sessionStart)
        }
        model.observe(event)
        guard event.kind == .launch else { return }
        let t = event.time
        // A session of the app: its habit has one more day, and today's window is behind it.
        if sessionStart { anticipate(event.app, after: t, now: t) }
        // The device is in use: the next pickup comes after its next silence.
        schedulePickupLook(now: t)
        if apps.contains(event.app) { expiries[event.app] = t + model.configuration.tau }
        if pendingTrigger == nil { pendingTrigger = t + DeviceModel.triggerDelay }
        if nextCheck == nil, let interval = configuration.checkInterval { nextCheck = t + interval }
    }

    public mutating func observeConditions(_ conditions: DeviceConditions, at time: Double, utcOffsetSeconds: Int32) {
        if mode == .following { catchUp(through: time, inclusive: false) }
        if configuration.conditionAware {
            self.conditions = conditions
            habits.observe(conditions, at: time, utcOffsetSeconds: utcOffsetSeconds)
            if !heldLooks.isEmpty || !deferredLooks.isEmpty { resumeHeldLooks(at: time) }
        }
    }

    public mutating func didFetch(app: Int32, at time: Double, result: FetchResult) {
        let event = DeviceEvent(time: time, utcOffsetSeconds: model.lastOffset, app: app, kind: .fetch, result: result)
        if mode == .following {
            catchUp(through: time, inclusive: true)
            noteFetch(event, result: result)
            return
        }
        model.observe(event)
        noteOutcome(app: app, at: time, result: result)
    }

    /// A fetch made, as a following policy is told of it: counted against the day's cap and
    /// the minimum interval like a live policy's own, learned like one's result.
    private mutating func noteFetch(_ event: DeviceEvent, result: FetchResult) {
        model.observe(event)
        guard apps.contains(event.app) else { return }
        enterDay(at: event.time)
        lastFetch[event.app] = event.time
        fetchesToday += 1
        noteOutcome(app: event.app, at: event.time, result: result)
    }

    private mutating func noteOutcome(app: Int32, at time: Double, result: FetchResult) {
        if result == .failed {
            let failures = (retries[app]?.failures ?? 0) + 1
            let delay = min(configuration.retryDelay * pow(2, Double(failures - 1)), Self.maximumRetryDelay)
            retries[app] = Retry(at: time + delay, failures: failures)
        } else {
            model.noteRefresh(app: app, at: time)
            retries[app] = nil
            // A fetch at a look before a pickup: the next such look comes when its cache goes stale.
            if time != lastPickupLook { expiries[app] = time + model.configuration.tau }
        }
    }

    /// The value of fetching `app` at `t`, and why.
    mutating func averageRate(of app: Int32, at t: Double) -> Double {
        if let cached = averageRates[app], t - cached.at < 6 * 3600 { return cached.rate }
        let rate = model.averageSessionRate(app: app, now: t, prior: prior)
        averageRates[app] = AverageRate(at: t, rate: rate)
        return rate
    }

    /// The value of fetching `app` at `t`: ``DeviceModel/fetchValue(app:at:now:refreshed:trigger:prior:liftWeight:averageRate:)``,
    /// the valuation plans use too.
    mutating func value(of app: Int32, at t: Double, trigger: FetchTrigger?) -> FetchValuation {
        var refreshed = model.lastRefresh(of: app)
        if let assumed = assumedRefreshes[app], assumed > refreshed ?? -.infinity { refreshed = assumed }
        // Fresh through the whole window: worth nothing (and no estimate is needed).
        if let refreshed, refreshed >= t { return .worthless }
        return model.fetchValue(
            app: app, at: t, now: t, refreshed: refreshed, trigger: trigger, prior: prior,
            liftWeight: configuration.coUsageLiftWeight, averageRate: averageRate(of: app, at: t))
    }

    public mutating func wake(at t: Double, into fetches: inout [PlannedFetch]) {
        var none: [ConsideredFetch] = []
        decide(at: t, into: &fetches, considered: &none, reporting: false)
    }

    public mutating func wake(at t: Double, into fetches: inout [PlannedFetch], considered: inout [ConsideredFetch]) {
        decide(at: t, into: &fetches, considered: &considered, reporting: true)
    }

    /// The fetches this policy would make from `start` on if no further event came, in time
    /// order: the plan `fetchcast predict --at start`, `fetchcast serve` and the `planned` policy
    /// answer. A following policy, caught up with the events before `start`, is run forward as a
    /// live one through its next decision points (the stale caches and retries ahead; a launch
    /// just before `start` makes `start` one); each fetch it makes is assumed to refresh its app's
    /// cache then. Its bar, outcome factor, day's count and conditions are those it has learned
    /// from the events, so a client that asks again after every event it hears of fetches
    /// exactly what the live policy would. Its constraints (``SchedulerConfiguration/constraints``)
    /// are judged under the conditions known at `start`, which a plan assumes hold: a fetch they
    /// refuse there is never planned.
    /// - Parameters:
    ///   - start: The plan's start (events before it are known).
    ///   - horizon: How far after the first allowed moment to plan, seconds.
    ///   - notBefore: No fetch before this instant (`earliestBeginDate`).
    ///   - count: Stop once this many fetches are planned (the first `count` of the whole plan).
    /// - Complexity: O(the decision points in the horizon × apps) valuations.
    public func plan(from start: Double, horizon: Double = 86_400, notBefore: Double? = nil, count: Int = .max) -> [ScheduledFetch] {
        precondition(mode == .following, "plans are made from a following policy")
        var forward = self
        forward.catchUp(through: start, inclusive: false)
        forward.mode = .live
        if let notBefore, notBefore > start { forward.configuration.notBefore = notBefore }
        let end = max(start, notBefore ?? start) + horizon
        let tau = model.configuration.tau
        var plan: [ScheduledFetch] = []
        var fetches: [PlannedFetch] = []
        var considered: [ConsideredFetch] = []
        while plan.count < count, let next = forward.nextWakeup, next < end {
            let t = max(next, start)
            fetches.removeAll(keepingCapacity: true)
            considered.removeAll(keepingCapacity: true)
            forward.decide(at: t, into: &fetches, considered: &considered, reporting: true)
            for f in fetches {
                guard let c = considered.first(where: { $0.app == f.app }) else { continue }
                plan.append(ScheduledFetch(
                    app: f.app, time: t, launchProbability: c.launchProbability, newDataProbability: c.newDataProbability, reason: f.reason))
                // Assumed made: the cache is fresh from here, looked at again when it goes stale.
                forward.assumedRefreshes[f.app] = t
                forward.retries[f.app] = nil
                if t != forward.lastPickupLook { forward.expiries[f.app] = t + tau }
            }
        }
        return plan
    }

    /// A following policy's looks at its decision points up to `t` inclusive, as the live policy
    /// would have made them if no further event came: what a plan from just after `t` starts
    /// from (a look may schedule another: ``pendingLooks`` then holds it).
    package mutating func advance(through t: Double) {
        precondition(mode == .following, "only a following policy is advanced")
        catchUp(through: t, inclusive: true)
    }

    /// A following policy's looks at its decision points before `t` (at `t` too when
    /// `inclusive`), as the live policy would have made them.
    private mutating func catchUp(through t: Double, inclusive: Bool) {
        var ignored: [PlannedFetch] = []
        while let w = nextWakeup, inclusive ? w <= t : w < t {
            ignored.removeAll(keepingCapacity: true)
            wake(at: w, into: &ignored)
        }
    }

    mutating func enterDay(at t: Double) {
        let today = LocalTime.day(time: t, utcOffsetSeconds: model.lastOffset)
        if day != today {
            day = today
            fetchesToday = 0
            pacer.startDay(today)
        }
    }

    /// An app weighed at a look.
    struct Candidate {
        var app: Int32
        /// The value ranked by (scaled by the app's outcome factor).
        var value: Double
        var session: Double
        var newData: Double
        var reason: FetchReason
        /// Whether the value is the response to the launch just before.
        var reacting: Bool
        /// The app's place in ``LearnedPolicy/apps``: the order of equal values.
        var rank: Int
    }

    /// How many of `candidates` (best first) a radio wakeup on a metered network on battery
    /// fetches, priced in sessions made fresh (``SchedulerConfiguration/cellularWakeupCost``):
    /// the best one if it clears the bar, then each next one that clears the bar or whose chance
    /// is at least that of a fetch at ``SchedulerConfiguration/coalesceFraction`` of the bar plus
    /// its share of the cost (``SchedulerConfiguration/cellularJoinCostShare``), up to the day's
    /// cap; none unless their chances, each less that of a fetch at the bar, add up to the cost.
    /// `nil` without a cost or before the device's outcomes are known (the bar factor decides).
    func cellularWakeupSize(_ candidates: [Candidate], bar: Double) -> Int? {
        guard let cost = configuration.cellularWakeupCost, let price = calibration.outcome(of: bar),
              let joinPrice = calibration.outcome(of: bar * configuration.coalesceFraction) else { return nil }
        var gain = 0.0
        var size = 0
        for c in candidates where fetchesToday + size < configuration.dailyCap {
            guard let chance = calibration.outcome(of: c.value, reacting: c.reacting) else { return nil }
            let joins = size > 0 && c.value >= configuration.minimumValue / 2
                && chance >= joinPrice + configuration.cellularJoinCostShare * cost
            guard c.value >= bar || joins else { break }
            gain += chance - price
            size += 1
        }
        return gain >= cost ? size : 0
    }

    /// One look at `t`: the apps weighed (those the constraints allow under the conditions
    /// known), and the fetches made of them.
    private mutating func decide(at t: Double, into fetches: inout [PlannedFetch], considered: inout [ConsideredFetch], reporting: Bool) {
        // The apps a look before a pickup at this instant fetched: not weighed again (a following
        // policy, told of those fetches only after this instant, weighs what the live one does).
        var pickupTaken: [Int32] = []
        if let p = pickupLook, p <= t {
            // A look before a pickup weighs only the pickup clock's fetches; the other looks due
            // at the same instant follow as they would without it.
            let othersDue = (pendingTrigger.map { $0 <= t } ?? false) || (nextCheck.map { $0 <= t } ?? false)
                || retries.values.contains { $0.at <= t } || expiries.values.contains { $0 <= t }
                || anticipations.values.contains { $0 <= t }
            pickupTaken = lookBeforePickup(at: t, into: &fetches, considered: &considered, reporting: reporting)
            guard othersDue else { return }
        }
        if !anticipations.isEmpty, !lookAhead(at: t) { return }
        if let p = pendingTrigger, p <= t { pendingTrigger = nil }
        if let c = nextCheck, c <= t {
            // Keep looking ahead while the device is active; sleep after a day of silence.
            let last = model.lastEventTime ?? t
            nextCheck = t - last < 86_400 ? configuration.checkInterval.map { t + $0 } : nil
        }
        let offset = model.lastOffset
        enterDay(at: t)
        for (app, e) in expiries where e <= t { expiries[app] = nil }
        calibration.expire(before: t)
        let dueRetries = retries.filter { $0.value.at <= t }.map(\.key)
        for app in dueRetries { retries[app]!.at = .infinity }
        let remaining = configuration.dailyCap - fetchesToday
        if let nb = configuration.notBefore, t < nb { return }
        let hour = LocalTime.hourOfDay(time: t, utcOffsetSeconds: offset)
        var candidates: [Candidate] = []
        let trigger = model.trigger(at: t)  // the same launch for every app weighed now
        for (rank, app) in apps.enumerated() where !pickupTaken.contains(app) {
            if let last = lastFetch[app], t - last < configuration.minimumInterval { continue }
            if configuration.conditionAware, let rules = configuration.constraints, !rules.allows(app, under: conditions ?? .unknown) {
                continue
            }
            var v = value(of: app, at: t, trigger: trigger)
            let reacting = trigger?.applies(to: app, at: t) == true
            calibration.weighed(app, value: v.value, at: t, reacting: reacting)
            v.value = min(1, v.value * calibration.factor(app))
            if v.value > 0 {
                // One fetch of the app per minimum interval at most: looks within it are one
                // opportunity, so a burst of launches does not inflate the pacer's counts.
                pacer.record(value: v.value, hour: hour, app: app, time: t, window: configuration.minimumInterval)
            }
            let reason: FetchReason = dueRetries.contains(app) ? .retry : v.reason
            candidates.append(Candidate(
                app: app, value: v.value, session: v.launchProbability, newData: v.newDataProbability, reason: reason, reacting: reacting,
                rank: rank))
        }
        // Best first; equal values in the order of `apps` (the caller's order, the same in a
        // replay and in the store, where the apps' ids differ).
        candidates.sort { ($0.value, $1.rank) > ($1.value, $0.rank) }
        let bar = remaining > 0 ? pacer.threshold(hour: hour, remaining: remaining, floor: configuration.minimumValue) : .infinity
        // A radio wakeup costs the battery by the network it starts on: the lead fetch clears a
        // bar scaled by the conditions (joins ride the lead's wakeup, as before); on a metered
        // network on battery, once the device's outcomes are known, the wakeup is priced in
        // sessions made fresh instead (`cellularWakeupCost`), and so are its joins.
        var leadBar = bar
        var cellularWakeup: Int?
        if let conditions {
            habits.advance(to: t)
            leadBar = max(configuration.minimumValue, bar * configuration.barFactor(conditions, habits: habits, at: t, utcOffsetSeconds: offset))
            if !conditions.isCharging, !conditions.isUnmetered, remaining > 0 {
                cellularWakeup = cellularWakeupSize(candidates, bar: bar)
            }
        }
        var taken = 0
        var lead: Int32?
        for c in candidates where remaining > 0 && fetchesToday < configuration.dailyCap {
            let joins = lead != nil && c.value >= bar * configuration.coalesceFraction && c.value >= configuration.minimumValue / 2
            if let cellularWakeup {
                guard taken < cellularWakeup else { break }
            } else {
                guard c.value >= (lead == nil ? leadBar : bar) || joins else { break }
            }
            fetches.append(PlannedFetch(app: c.app, reason: lead.map { c.value < bar ? .coalesced(with: $0) : c.reason } ?? c.reason))
            // A following policy counts the fetches it is told of, not what it would fetch.
            if mode == .live {
                lastFetch[c.app] = t
                fetchesToday += 1
            }
            taken += 1
            if lead == nil { lead = c.app }
        }
        guard reporting else { return }
        for (i, c) in candidates.enumerated() {
            considered.append(ConsideredFetch(
                app: c.app, value: c.value, launchProbability: c.session, newDataProbability: c.newData, bar: bar, fetched: i < taken))
        }
    }
}
