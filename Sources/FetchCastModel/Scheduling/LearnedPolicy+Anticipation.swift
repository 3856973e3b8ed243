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
        anticipations[app] = model.nextHabitWindow(
            app: app, after: after, before: before, minimumShare: configuration.anticipationMinimumShare)
    }

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

/// A device's pickup table and what it was made from (``DeviceModel/pickupTableKey``).
struct PickupCache: Sendable {
    var key: PickupTableKey
    var table: PickupTable
}

extension LearnedPolicy {
    /// The least recency-weighted share of the days of its kind on which the device was first
    /// used after a silence in a window of the day for the scheduler to look at its start
    /// (docs/model.md, "The pickup clock").
    static let pickupLookMinimumShare = 0.2
    /// The least value (the pickup clock's chance × new data × the outcome factor) at which a
    /// look before a pickup fetches an app whatever the pacer's bar.
    ///
    /// 0.1, with ``pickupLookMinimumShare`` 0.2 and ``DeviceModel/pickupMinimumDays`` 3, chosen on
    /// the development trace's training users (docs/model.md, "The pickup clock").
    package static let pickupBar = 0.1

    /// Schedules the look before the device's next predicted pickup after `after`: the start of
    /// the next window of the day `(w, w + τ]` that held a pickup on at least
    /// ``pickupLookMinimumShare`` of the recent days of its kind (and on at least
    /// ``DeviceModel/pickupMinimumDays`` days), moved to the fullest window of the τ that follows,
    /// no earlier than 2 h − τ after the device's last launch (a launch sooner is no pickup), at
    /// most a week ahead and no later than ``SchedulerConfiguration/anticipationSilence`` after
    /// its last event. Unless `force`d, a look already pending that is still possible is kept.
    /// None when the scheduler does not anticipate.
    mutating func schedulePickupLook(after: Double, force: Bool) {
        guard configuration.anticipates, let lastAny = model.lastLaunchOfAnyApp else {
            pickupLook = nil
            return
        }
        let tau = model.configuration.tau
        let earliest = max(after, lastAny + PickupLog.silence - tau)
        if !force, let p = pickupLook, p > earliest { return }
        let key = model.pickupTableKey
        if pickupCache?.key != key {
            pickupCache = PickupCache(key: key, table: model.pickupTable(minimumShare: Self.pickupLookMinimumShare))
        }
        let last = model.lastEventTime ?? after
        let before = min(after + 7 * 86_400, last + configuration.anticipationSilence)
        let offset = Double(model.lastOffset)
        pickupLook = pickupCache!.table.next(after: earliest + offset, before: before + offset, tau: tau).map { $0 - offset }
    }
}
