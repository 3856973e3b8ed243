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
        for app in due { anticipate(app, after: t + tau, now: t) }
        let reactive = (pendingTrigger.map { $0 <= t } ?? false) || (nextCheck.map { $0 <= t } ?? false)
            || retries.values.contains { $0.at <= t } || expiries.values.contains { $0 <= t }
        if reactive { return true }
        let idle = model.configuration.habitIdleHours * 3600
        return due.contains { app in model.lastLaunch(of: app).map { t - $0 >= idle } ?? true }
    }
}
