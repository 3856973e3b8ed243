import FetchCastCore
import FetchCastModel

/// Why a device's plan is empty, in one sentence: what `fetchcast predict --device D` prints as
/// its note and `GET /v1/devices/{device}/plan` answers as `note` (issue 39).
package enum EmptyPlanNote {
    /// "nothing planned for D in the next N hours: " and the cause (``cause(lastEvent:from:budget:)``).
    package static func sentence(device: String, horizonHours: Double, lastEvent: (time: Double, tau: Double)?, from start: Double?, budget: Double)
        -> String
    {
        "nothing planned for \(device) in the next \(Plural.count(Int(horizonHours.rounded(.up)), "hour")): "
            + cause(lastEvent: lastEvent, from: start, budget: budget)
    }

    /// The rule that stops plans after a device's silence when it applies (a daily habit eight
    /// days after the trace's end got "no habit … falls in that time"), else that nothing is
    /// pending and no habit falls in the horizon.
    ///
    /// - Parameters:
    ///   - lastEvent: The device's last event (Unix seconds) and its τ; `nil` when unknown.
    ///   - start: Where the plan starts (Unix seconds); `nil`: at the device's last event.
    ///   - budget: The plan's fetches per day (the scheduler's configuration).
    package static func cause(lastEvent: (time: Double, tau: Double)?, from start: Double?, budget: Double) -> String {
        if let lastEvent, let start,
           let quiet = LearnedPolicy.pendingLooksEnd(configuration: SchedulerConfiguration(budget: budget), tau: lastEvent.tau),
           start > lastEvent.time + quiet
        {
            let days = (start - lastEvent.time) / 86_400
            let silent = days >= 2 ? Plural.count(Int(days), "day") : Plural.count(Int((start - lastEvent.time) / 3600), "hour")
            let limit = quiet >= 2 * 86_400 ? Plural.count(Int((quiet / 86_400).rounded()), "day") : Plural.count(Int((quiet / 3600).rounded()), "hour")
            return "the device has been silent for \(silent) (no event since \(Timestamp.format(micros: Int64(lastEvent.time * 1_000_000), utcOffsetSeconds: 0))), "
                + "and plans stop \(limit) after a device's last event: its habits are not planned for a device silent that long (ask again after its next event)"
        }
        return "no fetch is worth a radio wakeup before its next event, and no habit of its apps falls in that time (ask again after its next event)"
    }
}
