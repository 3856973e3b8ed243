import FetchCastCore

extension LearnedPolicy {
    /// Schedules the look ahead of `app`'s next habit window starting after `after`
    /// (``DeviceModel/nextHabitWindow(app:after:before:minimumShare:)``), at most a week ahead and
    /// no later than ``SchedulerConfiguration/anticipationSilence`` after the device's last
    /// event; none when the scheduler does not anticipate or the app has no such window.
    mutating func anticipate(_ app: Int32, after: Double, now: Double) {
        anticipations[app] = nil
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
        holdRefusedLooks(due, at: t)
        for app in due { anticipate(app, after: t + tau, now: t) }
        let reactive = (pendingTrigger.map { $0 <= t } ?? false) || (nextCheck.map { $0 <= t } ?? false)
            || retries.values.contains { $0.at <= t } || expiries.values.contains { $0 <= t }
        if reactive { return true }
        let idle = model.configuration.habitIdleHours * 3600
        return due.contains { app in model.lastLaunch(of: app).map { t - $0 >= idle } ?? true }
    }

    /// Keeps, for each of `apps` whose look ahead at `t` the constraints refuse under the
    /// conditions known (an `unmetered` app on cellular), the end of its window `t + τ`: until
    /// then, conditions that allow the app are a look (``resumeHeldLooks(at:)``), so a reader
    /// who opens news at 08:00 and reaches Wi-Fi at 07:50 is fetched at 07:50, the last moments
    /// inside τ before the habit that the constraints allow.
    mutating func holdRefusedLooks(_ apps: [Int32], at t: Double) {
        guard configuration.conditionAware, let rules = configuration.constraints else { return }
        for app in apps where !rules.allows(app, under: conditions ?? .unknown) {
            heldLooks[app] = t + model.configuration.tau
        }
    }

    /// At a change of conditions at `t`: each held look (``holdRefusedLooks(_:at:)``) whose app
    /// the conditions now allow becomes a look at `t`, if its window has not ended; ended ones
    /// are dropped.
    mutating func resumeHeldLooks(at t: Double) {
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
