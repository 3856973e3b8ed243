import FetchCastCore

/// When a device is usually on Wi-Fi and on external power, by hour of week: the share of the
/// time each hour-of-week slot was spent on Wi-Fi (of the time the network was known) and on
/// external power (of the time the power source was known), learned from the device's `state`
/// rows as they come.
///
/// A state holds from its row until the next row that changes it (``DeviceConditions``); a
/// stretch with no row for more than ``maximumHold`` counts only its first ``maximumHold`` (a
/// trace's gap says nothing of the conditions in it). The shares are plain averages over the
/// history, shrunk towards the device's overall share with ``priorSeconds`` of weight, so an hour
/// seen once does not decide alone.
///
/// The same rows in the same order give the same habits, whoever feeds them: the live policy
/// told of each row as it happens, and a plan made from a store's rows before its start.
public struct ConditionHabits: Sendable, Hashable {
    /// The longest a state is taken to hold without a row, seconds.
    public static let maximumHold = 12.0 * 3600
    /// The weight of the device's overall share in each slot's, seconds.
    public static let priorSeconds = 3600.0

    var networkKnown = [Double](repeating: 0, count: HourOfWeek.count)
    var wifi = [Double](repeating: 0, count: HourOfWeek.count)
    var powerKnown = [Double](repeating: 0, count: HourOfWeek.count)
    var charging = [Double](repeating: 0, count: HourOfWeek.count)
    var totals = Totals()
    /// The state in effect since the last row, and when it started.
    var open: Open?

    struct Totals: Sendable, Hashable {
        var networkKnown = 0.0, wifi = 0.0, powerKnown = 0.0, charging = 0.0
    }

    struct Open: Sendable, Hashable {
        var time: Double
        var conditions: DeviceConditions
        var offset: Int32
    }

    /// No history.
    public init() {}

    /// Whether any time with a known network or power source was seen.
    public var isEmpty: Bool { totals.networkKnown == 0 && totals.powerKnown == 0 }

    /// Learns that `conditions` hold from `time` on (a `state` row, with the device's UTC offset
    /// then). Rows must come in time order.
    public mutating func observe(_ conditions: DeviceConditions, at time: Double, utcOffsetSeconds offset: Int32) {
        close(at: time)
        open = Open(time: time, conditions: conditions, offset: offset)
    }

    /// The habits with the state in effect counted up to `time` (≥ the last row), for a plan
    /// made at `time`.
    public func through(_ time: Double) -> ConditionHabits {
        var copy = self
        copy.close(at: time)
        return copy
    }

    private mutating func close(at time: Double) {
        guard let o = open, time > o.time else { return }
        let end = min(time, o.time + Self.maximumHold)
        let c = o.conditions
        HourOfWeek.spread(from: o.time, to: end, offset: o.offset) { slot, seconds in
            if let n = c.network {
                networkKnown[slot] += seconds
                totals.networkKnown += seconds
                if n == .wifi {
                    wifi[slot] += seconds
                    totals.wifi += seconds
                }
            }
            if let p = c.power {
                powerKnown[slot] += seconds
                totals.powerKnown += seconds
                if p == .charging {
                    charging[slot] += seconds
                    totals.charging += seconds
                }
            }
        }
        open = Open(time: time, conditions: c, offset: o.offset)
    }

    /// P(on Wi-Fi) in an hour-of-week slot, or `nil` when the network was never known.
    public func wifiShare(slot: Int) -> Double? {
        Self.share(wifi[slot], of: networkKnown[slot], overall: totals.wifi, of: totals.networkKnown)
    }

    /// P(on external power) in an hour-of-week slot, or `nil` when the power source was never known.
    public func chargingShare(slot: Int) -> Double? {
        Self.share(charging[slot], of: powerKnown[slot], overall: totals.charging, of: totals.powerKnown)
    }

    private static func share(_ part: Double, of whole: Double, overall: Double, of overallWhole: Double) -> Double? {
        guard overallWhole > 0 else { return nil }
        let base = overall / overallWhole
        return (part + priorSeconds * base) / (whole + priorSeconds)
    }

    /// The conditions a fetch at `time` will most likely meet: `current` (the state at `now`)
    /// while `time` is less than `horizon` after `now`, and beyond it the usual network and
    /// power source of `time`'s hour of week (the more likely of the two, where known; unknown
    /// where not). Battery level and Low Power Mode stay as `current` says.
    public func expected(at time: Double, now: Double, current: DeviceConditions, horizon: Double, utcOffsetSeconds offset: Int32) -> DeviceConditions {
        guard time - now >= horizon, !isEmpty else { return current }
        var c = current
        let slot = HourOfWeek.slot(time, offset: offset)
        if let w = wifiShare(slot: slot) { c.network = w >= 0.5 ? .wifi : .cellular }
        if let p = chargingShare(slot: slot) { c.power = p >= 0.5 ? .charging : .battery }
        return c
    }
}
