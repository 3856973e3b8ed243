import FetchCastCore
import FetchCastModel

/// Why a device's plan is empty, in one sentence: what `fetchcast predict --device D` prints as
/// its note and `GET /v1/devices/{device}/plan` answers as `note` (issue 39).
package enum EmptyPlanNote {
    /// "nothing planned for D in the next N hours: " and the cause (``cause(lastEvent:from:budget:pickupRule:)``).
    package static func sentence(
        device: String, horizonHours: Double, lastEvent: (time: Double, tau: Double)?, from start: Double?, budget: Double,
        pickupRule: PickupClockRule? = nil
    ) -> String {
        "nothing planned for \(device) in the next \(Plural.count(Int(horizonHours.rounded(.up)), "hour")): "
            + cause(lastEvent: lastEvent, from: start, budget: budget, pickupRule: pickupRule)
    }

    /// ``sentence(device:horizonHours:lastEvent:from:budget:pickupRule:)`` from the device's model
    /// (`nil`: not known), planned from `start` (`nil`: its last event).
    package static func sentence(device: String, horizonHours: Double, model: DeviceModel?, from start: Double?, budget: Double) -> String {
        sentence(device: device, horizonHours: horizonHours, facts: model.map(Facts.init), from: start, budget: budget)
    }

    /// ``sentence(device:horizonHours:model:from:budget:)`` from what it reads of the model.
    package static func sentence(device: String, horizonHours: Double, facts: Facts?, from start: Double?, budget: Double) -> String {
        let lastEvent = facts.flatMap { f in f.lastEventTime.map { ($0, f.tau) } }
        let from = start ?? lastEvent?.0
        return sentence(
            device: device, horizonHours: horizonHours, lastEvent: lastEvent, from: start, budget: budget,
            pickupRule: from.flatMap { facts?.pickupClock.rule(from: $0) })
    }

    /// What a note reads of a device's model: its last event, τ and the pickup clock's facts,
    /// with the last instant the model observed. A plan table keeps them (``KeptPlanTable/note``),
    /// so that its device's empty plan is noted without reading the model while the table
    /// answers: for a start after ``lastObservedTime``, the model a plan is made from is this one.
    package struct Facts: Sendable, Hashable {
        package var lastEventTime: Double?
        package var tau: Double
        package var pickupClock: PickupClockFacts
        package var lastObservedTime: Double?

        package init(lastEventTime: Double?, tau: Double, pickupClock: PickupClockFacts, lastObservedTime: Double?) {
            (self.lastEventTime, self.tau, self.pickupClock, self.lastObservedTime) = (lastEventTime, tau, pickupClock, lastObservedTime)
        }

        package init(_ model: DeviceModel) {
            self.init(lastEventTime: model.lastEventTime, tau: model.configuration.tau, pickupClock: model.pickupClockFacts,
                      lastObservedTime: model.lastObservedTime)
        }

        /// Whether they are those of the model a plan from `start` is made from (as
        /// ``ModelRepository/Snapshot/model(of:before:)`` picks it): the model has observed
        /// nothing at or after `start`.
        package func apply(from start: Double) -> Bool { lastObservedTime.map { $0 < start } ?? true }

        func encode(into w: inout BinaryWriter) {
            w.optionalDouble(lastEventTime)
            w.double(tau)
            w.int(pickupClock.observedDays)
            w.int(pickupClock.pickups)
            w.optionalDouble(pickupClock.lastLaunch)
            w.double(pickupClock.longestSilence)
            w.optionalDouble(lastObservedTime)
        }

        init(from r: inout BinaryReader) throws {
            lastEventTime = try r.optionalDouble()
            tau = try r.double()
            let (days, pickups, lastLaunch, silence) = (try r.int(), try r.int(), try r.optionalDouble(), try r.double())
            pickupClock = PickupClockFacts(observedDays: days, pickups: pickups, lastLaunch: lastLaunch, longestSilence: silence)
            lastObservedTime = try r.optionalDouble()
        }
    }

    /// The rule that stops plans after a device's silence when it applies (a daily habit eight
    /// days after the trace's end got "no habit … falls in that time"), else that nothing is
    /// pending and no habit falls in the horizon, and why no look before the device's next
    /// pickup is planned: the pickup clock's own rule when one applies (too few days of use or
    /// pickups, or a silence past the longest it looks through: a heavy user asked at 02:00 whose
    /// last launch was the morning before), else that no app's chance of being opened first
    /// was worth a wakeup (none reached the bar, or the clock gave none).
    ///
    /// - Parameters:
    ///   - lastEvent: The device's last event (Unix seconds) and its τ; `nil` when unknown.
    ///   - start: Where the plan starts (Unix seconds); `nil`: at the device's last event.
    ///   - budget: The plan's fetches per day (the scheduler's configuration).
    ///   - pickupRule: The pickup clock's rule that applies from `start` (``DeviceModel/pickupClockRule(from:)``).
    package static func cause(
        lastEvent: (time: Double, tau: Double)?, from start: Double?, budget: Double, pickupRule: PickupClockRule? = nil
    ) -> String {
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
        let pickup: String
        switch pickupRule {
        case .fewDays(let days):
            pickup = "looks before its first use after 2 h unused need \(PickupClockRule.minimumDays) days of use (it has \(days))"
        case .fewPickups(let pickups):
            pickup = "looks before its first use after 2 h unused need \(Plural.count(PickupClockRule.minimumPickups, "pickup")) "
                + "(a launch after 2 h unused; it has \(pickups))"
        case .longSilence(let last, let limit):
            let since = start.map { " (\(Plural.count(Int(($0 - last) / 3600), "hour")) before the plan's start)" } ?? ""
            let floor = Int((PickupClockRule.longestSilence / 3600).rounded())
            let ceiling = Int((PickupClockRule.longestSilenceCeiling / 3600).rounded())
            pickup = "looks before its first use after 2 h unused stop \(Plural.count(Int((limit / 3600).rounded()), "hour")) after its last launch, "
                + "\(Timestamp.format(micros: Int64(last * 1_000_000), utcOffsetSeconds: 0))\(since): "
                + "the silence 1 in 10 of its pickups came after, at least \(floor) h and at most \(ceiling) h; "
                + "a longer one is more often a device switched off than a late first use"
        case nil:
            pickup = "no app's chance of being opened first after 2 h unused is worth one"
        }
        return "no fetch is worth a radio wakeup before its next event, no habit of its apps falls in that time, and \(pickup) "
            + "(ask again after its next event)"
    }
}
