import FetchCastCore

extension LearnedPolicy {
    /// Schedules the look ahead of `app`'s next habit window starting after `after`
    /// (``DeviceModel/nextHabitWindow(app:after:before:minimumShare:)``), at most a week ahead and
    /// no later than ``SchedulerConfiguration/anticipationSilence`` after the device's last
    /// event; none when the scheduler does not anticipate or the app has no such window.
    mutating func anticipate(_ app: Int32, after: Double, now: Double) {
        anticipations[app] = nil
        deferredLooks[app] = nil
        guard configuration.anticipates, apps.contains(app) else { return }
        let last = model.lastEventTime ?? now
        let before = min(after + 7 * 86_400, last + configuration.anticipationSilence)
        // A window only the slack share admits holds sessions on the days its share was read
        // from: a weekday habit's share lent to Saturdays is no habit of Saturdays.
        let share = anticipationShare
        anticipations[app] = model.nextHabitWindow(
            app: app, after: after, before: before, minimumShare: configuration.anticipationMinimumShare,
            looseShare: share < configuration.anticipationMinimumShare ? share : nil)
    }

    /// The least share of the recent days a habit window must hold for a look ahead of it:
    /// ``SchedulerConfiguration/anticipationMinimumShare``, or
    /// ``SchedulerConfiguration/slackAnticipationShare`` when that is lower and the budget is
    /// slack: a usual day of the device (the pacer's memory) holds fewer opportunities worth
    /// ``SchedulerConfiguration/minimumValue`` than ``slackCapFraction`` of the day's cap, so a
    /// look's fetch takes no fetch from a later moment (docs/model.md, "Where the budget is
    /// slack"). A window that only that share admits must hold sessions on the days its share was
    /// read from (its day of the week, or its kind of day).
    var anticipationShare: Double {
        let share = configuration.anticipationMinimumShare
        guard configuration.slackAnticipationShare < share,
              let usual = pacer.usualDayOpportunities(atLeast: configuration.minimumValue),
              usual < Self.slackCapFraction * Double(configuration.dailyCap)
        else { return share }
        return configuration.slackAnticipationShare
    }

    /// The share of the cap a usual day's opportunities stay below for the budget to be slack:
    /// half, so that a device whose busy days reach the cap is not (at the whole cap, the
    /// development trace's training users lost 0.003 at a cap of 96; docs/model.md).
    static let slackCapFraction = 0.5

    /// The anticipations due at `t` moved to the apps' next habit windows (after this one's τ);
    /// whether `t` is a look: `false` when nothing but anticipations is due and every app they
    /// are for was opened within ``ModelConfiguration/habitIdleHours`` (its launches are being
    /// reacted to, and its habit does not speak: ``DeviceModel/habitChance(_:at:base:)``).
    mutating func lookAhead(at t: Double) -> Bool {
        // Every look asks: nothing is allocated unless a look ahead is due.
        guard anticipations.values.contains(where: { $0 <= t }) else { return true }
        let due = anticipations.filter { $0.value <= t }.map(\.key).sorted()
        let tau = model.configuration.tau
        var looking: [Int32] = []
        for app in due {
            // A deferred look that comes (a cheaper moment, or its last moment) ends its window's deferral.
            let windowEnd = deferredLooks[app]
            if windowEnd == nil, deferCostlyLook(app, at: t) { continue }
            holdRefusedLook(app, at: t, until: windowEnd ?? t + tau)
            anticipate(app, after: t + tau, now: t)
            looking.append(app)
        }
        let reactive = (pendingTrigger.map { $0 <= t } ?? false) || (nextCheck.map { $0 <= t } ?? false)
            || retries.values.contains { $0.at <= t } || expiries.values.contains { $0 <= t }
        if reactive { return true }
        let idle = model.configuration.habitIdleHours * 3600
        return looking.contains { app in model.lastLaunch(of: app).map { t - $0 >= idle } ?? true }
    }

    /// Defers the look ahead of `app` at `t`, the start of its habit's window `(t, t + τ]`, when
    /// the device is on a metered (or unknown) network on battery, the dearest moment for a radio
    /// wakeup: to the last moment of equal value, ``deferredLookLead`` before the earliest
    /// session start of the app the habit log keeps in that window of the day (a look there
    /// still covers every session the history holds in it), unless conditions turn cheaper first
    /// — Wi-Fi or a charger — which are then the look (``resumeHeldLooks(at:)``). Waiting there
    /// costs no session the history knows of and never makes the wakeup dearer; on Wi-Fi on
    /// battery a look is not deferred, since a device that leaves Wi-Fi would be fetched on
    /// cellular instead. Returns whether it deferred.
    mutating func deferCostlyLook(_ app: Int32, at t: Double) -> Bool {
        guard configuration.conditionAware, let lead = configuration.deferredLookLead, let conditions, !conditions.isCharging,
              !conditions.isUnmetered, let earliest = model.earliestHabitSession(app: app, after: t)
        else { return false }
        let latest = earliest - lead
        guard latest > t else { return false }
        anticipations[app] = latest
        deferredLooks[app] = t + model.configuration.tau
        return true
    }

    /// Keeps, when the constraints refuse the look ahead of `app` at `t` under the conditions
    /// known (an `unmetered` app on cellular), the end of its window, `end`: until then, conditions that allow the app are a look (``resumeHeldLooks(at:)``), so a reader
    /// who opens news at 08:00 and reaches Wi-Fi at 07:50 is fetched at 07:50, the last moments
    /// inside τ before the habit that the constraints allow.
    mutating func holdRefusedLook(_ app: Int32, at t: Double, until end: Double) {
        guard configuration.conditionAware, let rules = configuration.constraints, end > t,
              !rules.allows(app, under: conditions ?? .unknown) else { return }
        heldLooks[app] = end
    }

    /// At a change of conditions at `t`: each held look (``holdRefusedLook(_:at:until:)``) whose app
    /// the conditions now allow becomes a look at `t`, if its window has not ended; ended ones
    /// are dropped. Each deferred look (``deferCostlyLook(_:at:)``) becomes a look at `t` when
    /// the device is now charging or on Wi-Fi.
    mutating func resumeHeldLooks(at t: Double) {
        if let conditions, conditions.isCharging || conditions.isUnmetered {
            for (app, _) in deferredLooks { anticipations[app] = min(anticipations[app] ?? t, t) }
        }
        guard let rules = configuration.constraints else { heldLooks = [:]; return }
        for (app, end) in heldLooks.sorted(by: { $0.key < $1.key }) {
            if t >= end {
                heldLooks[app] = nil
            } else if rules.allows(app, under: conditions ?? .unknown) {
                heldLooks[app] = nil
                anticipations[app] = min(anticipations[app] ?? t, t)
            }
        }
    }
}

extension LearnedPolicy {
    /// The least value (the pickup clock's chance × new data × the uncovered share) at which a
    /// look before a pickup fetches an app: ``pickupPacerShare`` of the pacer's bar (a fetch
    /// before a pickup spends the day's budget as any other), and at least
    /// ``SchedulerConfiguration/minimumValue``; scaled by the conditions as the pacer's bar is.
    /// The least chance at which the scheduler looks is ``SchedulerConfiguration/minimumValue``.
    ///
    /// 0.5, with ``pickupLongestSilence`` 14 h, chosen on the development trace's training users
    /// (docs/model.md, "The pickup clock"): the lowest share that kept their hit rate within 0.001;
    /// a share of 0 (the minimum value alone) made the first pickup fresher and the warm launches
    /// staler, since on half of those users' days the cap binds and a fetch before a pickup is one
    /// fewer in the evening.
    static let pickupPacerShare = 0.5
    /// An app joins a look's wakeup before a pickup at this fraction of its bar.
    static let pickupJoinFraction = 0.5
    /// How long after the device's last launch looks before its next pickup go on at least,
    /// seconds; longer on a device whose own pickups often end longer silences
    /// (``DeviceModel/pickupLongestSilence``).
    static let pickupLongestSilence = 14 * 3600.0
    /// How long after the device's last launch looks before its next pickup go on at most,
    /// seconds: a silence of a whole day is more often a device switched off or a trace's gap
    /// than a late pickup.
    static let pickupLongestSilenceCeiling = 24 * 3600.0
    /// How far ahead of a look that found nothing to fetch the next one is sought, seconds.
    static let pickupScanHorizon = 36 * 3600.0

    /// After a launch at `now` (or a model's history up to `now`): the first look before the
    /// device's next pickup, 2 h − τ after its last launch (a launch sooner is no pickup), when
    /// the scheduler anticipates and the pickup clock could speak (a week of use, a few pickups),
    /// no later than ``SchedulerConfiguration/anticipationSilence`` after its last event, and
    /// none once the silence has lasted the device's ``DeviceModel/pickupLongestSilence`` (a model whose history ends in
    /// fetches or publishes long after its last launch).
    mutating func schedulePickupLook(now: Double) {
        pickupLook = nil
        guard configuration.anticipates, configuration.looksBeforePickups, let last = model.lastLaunchOfAnyApp,
              model.habitLog.days.count >= DeviceModel.pickupMinimumObservedDays,
              model.pickupLog.pickups.count >= DeviceModel.pickupMinimumDays
        else { return }
        let first = max(now, last + PickupLog.silence - model.configuration.tau)
        if first <= (model.lastEventTime ?? now) + configuration.anticipationSilence, first < last + model.pickupLongestSilence {
            pickupLook = first
        }
    }

    /// The next look before the pickup from `from` on, while the device stays silent: the
    /// first instant, on a 5-minute grid, at which the pickup clock gives some app a chance of at
    /// least ``SchedulerConfiguration/minimumValue`` (``DeviceModel/pickupChance(app:at:)``), moved to the instant of the τ
    /// after it where the apps' chances add up to the most (the latest of equals: a look there
    /// covers more of the first session), within ``pickupScanHorizon`` and
    /// ``SchedulerConfiguration/anticipationSilence`` after the device's last event; none after.
    mutating func seekPickupLook(from: Double) {
        pickupLook = nil
        guard configuration.looksBeforePickups else { return }
        let tau = model.configuration.tau, step = 300.0
        var end = min(from + Self.pickupScanHorizon, (model.lastEventTime ?? from) + configuration.anticipationSilence)
        if let last = model.lastLaunchOfAnyApp { end = min(end, last + model.pickupLongestSilence) }
        // The model does not change during the scan: which apps the clock speaks for, and each
        // day's first launches, are asked once.
        let speaking = apps.filter { model.pickupClockSpeaks(for: $0) }
        var firstLaunches: PickupLog.FirstLaunches?
        func chances(at t: Double) -> (best: Double, sum: Double) {
            var best = 0.0, sum = 0.0
            model.pickupChances(speaking, at: t, firstLaunches: &firstLaunches) { c in
                best = max(best, c)
                sum += c
            }
            return (best, sum)
        }
        var t = from
        while t <= end {
            let here = chances(at: t)
            if here.best >= configuration.minimumValue {
                var (look, most) = (t, here.sum)
                var u = t + step
                while u <= min(t + tau, end) {
                    let there = chances(at: u)
                    if there.best >= configuration.minimumValue, there.sum >= most { (look, most) = (u, there.sum) }
                    u += step
                }
                pickupLook = look
                return
            }
            t += step
        }
    }

    /// A look at `t` before the device's first use after its present silence: each app is
    /// valued at the pickup clock's chance (``DeviceModel/pickupChance(app:at:)``: of the recent
    /// days of this kind still silent at this time of day, the share first used by `t + τ` with
    /// the app in that first session) × the chance of new data × the share of `(t, t + τ]` not
    /// yet fresh; the best is fetched when it reaches ``pickupPacerShare`` of the pacer's bar
    /// (and ``SchedulerConfiguration/minimumValue``; scaled by the conditions),
    /// and the others reaching ``pickupJoinFraction`` of it join its wakeup, within the day's
    /// cap (on a metered network on battery, once the device's outcomes are known, the wakeup is
    /// priced in sessions made fresh, as the pacer's looks are). The next look is τ later when it fetched (its caches go stale then), else the next
    /// moment the clock gives some app a chance (``seekPickupLook(from:)``); a launch ends
    /// them (``schedulePickupLook(now:)``). Neither
    /// the pacer nor the outcome factor weighs these looks: they are not the launches' moments.
    /// Returns the apps fetched (the ones a live policy fetches, in either mode).
    mutating func lookBeforePickup(
        at t: Double, into fetches: inout [PlannedFetch], considered: inout [ConsideredFetch], reporting: Bool
    ) -> [Int32] {
        let tau = model.configuration.tau
        lastPickupLook = t
        enterDay(at: t)
        if let nb = configuration.notBefore, t < nb {
            pickupLook = nb
            return []
        }
        var candidates: [Candidate] = []
        for (rank, app) in apps.enumerated() {
            if let last = lastFetch[app], t - last < configuration.minimumInterval { continue }
            if configuration.conditionAware, let rules = configuration.constraints, !rules.allows(app, under: conditions ?? .unknown) {
                continue
            }
            var refreshed = model.lastRefresh(of: app)
            if let assumed = assumedRefreshes[app], assumed > refreshed ?? -.infinity { refreshed = assumed }
            if let refreshed, refreshed >= t { continue }
            guard let chance = model.pickupChance(app: app, at: t) else { continue }
            let uncovered = max(0, t + tau - max(t, (refreshed ?? -.infinity) + tau)) / tau
            let fresh = model.newDataProbability(app: app, at: t, since: refreshed, now: t)
            let value = chance * fresh * uncovered
            guard value > 0 else { continue }
            candidates.append(Candidate(
                app: app, value: value, session: chance, newData: fresh, reason: .pickup(probability: chance), reacting: false, rank: rank))
        }
        candidates.sort { ($0.value, $1.rank) > ($1.value, $0.rank) }
        let hour = LocalTime.hourOfDay(time: t, utcOffsetSeconds: model.lastOffset)
        let remaining = configuration.dailyCap - fetchesToday
        let pacerBar = remaining > 0 ? pacer.threshold(hour: hour, remaining: remaining, floor: configuration.minimumValue) : .infinity
        let plainBar = max(configuration.minimumValue, pacerBar * Self.pickupPacerShare)
        var bar = plainBar
        // On a metered network on battery, priced as any wakeup once the outcomes are known.
        var cellularWakeup: Int?
        if let conditions {
            habits.advance(to: t)
            bar *= configuration.barFactor(conditions, habits: habits, at: t, utcOffsetSeconds: model.lastOffset)
            if !conditions.isCharging, !conditions.isUnmetered { cellularWakeup = cellularWakeupSize(candidates, bar: plainBar) }
        }
        var taken: [Int32] = []
        var lead: Int32?
        // A following policy does not count what it would fetch, so it counts here.
        for c in candidates where fetchesToday + (mode == .live ? 0 : taken.count) < configuration.dailyCap {
            if let cellularWakeup {
                guard taken.count < cellularWakeup else { break }
            } else {
                guard c.value >= (lead == nil ? bar : bar * Self.pickupJoinFraction) else { break }
            }
            fetches.append(PlannedFetch(app: c.app, reason: c.reason))
            if mode == .live {
                lastFetch[c.app] = t
                fetchesToday += 1
            }
            taken.append(c.app)
            if lead == nil { lead = c.app }
        }
        if taken.isEmpty { seekPickupLook(from: t + tau) } else { pickupLook = t + tau }
        guard reporting else { return taken }
        for c in candidates {
            considered.append(ConsideredFetch(
                app: c.app, value: c.value, launchProbability: c.session, newDataProbability: c.newData, bar: bar,
                fetched: taken.contains(c.app)))
        }
        return taken
    }
}

extension FetchReason {
    /// Whether the pickup clock carried the fetch.
    var isPickup: Bool {
        if case .pickup = self { return true }
        return false
    }
}

