/// Rule 5, the radio tail model, applied to one device's fetches in time order.
///
/// Feed every fetch with ``add(at:)`` in non-decreasing time; call ``finish()`` once at the end
/// to add the last session's tail. The joules of each fetch are its promotion (when it opens a
/// session), the tail gap before it inside its session, its transfer, and, for the last fetch of
/// a session, the session's closing full tail, so the per-fetch joules add up to ``joules``.
///
/// One meter models one radio: ``PolicyReplay`` keeps one for cellular (the `--energy`
/// profile) and one for Wi-Fi, and a fetch charges the meter of the network in effect.
///
/// ``batteryJoules`` counts what the battery paid: a fetch's own charge when it was made on
/// battery, and a session's closing tail when the session's last fetch was.
///
/// - Complexity: O(1) per fetch.
package struct EnergyMeter: Sendable {
    /// What adding a fetch cost.
    package struct Charge: Sendable, Hashable {
        /// Whether the fetch opened a new radio session (a wakeup).
        package var openedSession: Bool
        /// The 1-based session (wakeup) the fetch belongs to.
        package var session: Int
        /// Joules charged to this fetch so far: promotion + tail gap + transfer.
        package var joules: Double
        /// The closing tail charged to the *previous* fetch, when this one opened a new session.
        package var previousClosingTail: Double
    }

    let profile: EnergyProfile
    /// Radio sessions opened so far (wakeups).
    package private(set) var sessions = 0
    /// Joules so far (closing tails included once ``finish()`` ran).
    package private(set) var joules = 0.0
    /// The part of ``joules`` paid from the battery (fetches made while not charging).
    package private(set) var batteryJoules = 0.0
    /// Whether the latest fetch was made on battery (its session's closing tail is then too).
    private var lastOnBattery = true
    private var transferEnd = -Double.infinity
    private var finished = false

    package init(profile: EnergyProfile) { self.profile = profile }

    /// Charges a fetch that starts at `time`, made on battery unless `onBattery` is false.
    package mutating func add(at time: Double, onBattery: Bool = true) -> Charge {
        let p = profile
        if sessions == 0 || time - transferEnd > p.tailSeconds {
            let closing = sessions == 0 ? 0 : p.tailSeconds * p.tailWatts
            sessions += 1
            let start = time + p.promotionSeconds
            transferEnd = start + p.transferSeconds
            let charged = p.promotionSeconds * p.promotionWatts + p.transferSeconds * p.transferWatts
            joules += closing + charged
            if lastOnBattery { batteryJoules += closing }
            if onBattery { batteryJoules += charged }
            lastOnBattery = onBattery
            return Charge(openedSession: true, session: sessions, joules: charged, previousClosingTail: closing)
        }
        let gap = max(0, time - transferEnd)
        let start = max(time, transferEnd)
        transferEnd = start + p.transferSeconds
        let charged = gap * p.tailWatts + p.transferSeconds * p.transferWatts
        joules += charged
        if onBattery { batteryJoules += charged }
        lastOnBattery = onBattery
        return Charge(openedSession: false, session: sessions, joules: charged, previousClosingTail: 0)
    }

    /// Ends the last session with a full tail; returns the joules charged to the last fetch.
    package mutating func finish() -> Double {
        guard !finished, sessions > 0 else { return 0 }
        finished = true
        let closing = profile.tailSeconds * profile.tailWatts
        joules += closing
        if lastOnBattery { batteryJoules += closing }
        return closing
    }
}
