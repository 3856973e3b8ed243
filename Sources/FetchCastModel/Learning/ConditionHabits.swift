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
public struct ConditionHabits: Sendable, Hashable, Codable {
    /// The longest a state is taken to hold without a row, seconds.
    public static let maximumHold = 12.0 * 3600
    /// The weight of the device's overall share in each slot's, seconds.
    public static let priorSeconds = 3600.0

    /// Time on Wi-Fi of the time the network was known, and on external power of the time the
    /// power source was known.
    var wifi = Share(), charging = Share()
    /// The state in effect since the last row, and when it started.
    var open: Open?

    /// Seconds of one condition out of the seconds its field was known, per slot and in all.
    struct Share: Sendable, Hashable, Codable {
        var known = [Double](repeating: 0, count: HourOfWeek.count)
        var held = [Double](repeating: 0, count: HourOfWeek.count)
        var totalKnown = 0.0, totalHeld = 0.0

        mutating func add(_ seconds: Double, slot: Int, holds: Bool) {
            known[slot] += seconds
            totalKnown += seconds
            if holds {
                held[slot] += seconds
                totalHeld += seconds
            }
        }

        /// The slot's share, shrunk towards the overall share with ``ConditionHabits/priorSeconds``;
        /// `nil` when the field was never known.
        func share(slot: Int) -> Double? {
            guard totalKnown > 0 else { return nil }
            return (held[slot] + priorSeconds * (totalHeld / totalKnown)) / (known[slot] + priorSeconds)
        }
    }

    struct Open: Sendable, Hashable, Codable {
        /// The row's instant: the state is taken to hold at most ``maximumHold`` after it.
        var time: Double
        /// Counted up to here.
        var counted: Double
        var conditions: DeviceConditions
        var offset: Int32
    }

    /// No history.
    public init() {}

    /// Whether any time with a known network or power source was seen.
    public var isEmpty: Bool { wifi.totalKnown == 0 && charging.totalKnown == 0 }

    /// Learns that `conditions` hold from `time` on (a `state` row, with the device's UTC offset
    /// then). Rows must come in time order.
    public mutating func observe(_ conditions: DeviceConditions, at time: Double, utcOffsetSeconds offset: Int32) {
        close(at: time)
        open = Open(time: time, counted: time, conditions: conditions, offset: offset)
    }

    /// The habits with the state in effect counted up to `time` (≥ the last row), for a plan
    /// made at `time`.
    public func through(_ time: Double) -> ConditionHabits {
        var copy = self
        copy.advance(to: time)
        return copy
    }

    /// Counts the state in effect up to `time` (≥ the last row) in place: what a live policy
    /// does before each decision, without copying the habits.
    public mutating func advance(to time: Double) { close(at: time) }

    private mutating func close(at time: Double) {
        guard let o = open else { return }
        let end = min(time, o.time + Self.maximumHold)
        guard end > o.counted else { return }
        let c = o.conditions
        HourOfWeek.spread(from: o.counted, to: end, offset: o.offset) { slot, seconds in
            if let n = c.network { wifi.add(seconds, slot: slot, holds: n == .wifi) }
            if let p = c.power { charging.add(seconds, slot: slot, holds: p == .charging) }
        }
        open!.counted = end
    }

    /// P(on Wi-Fi) in an hour-of-week slot, or `nil` when the network was never known.
    public func wifiShare(slot: Int) -> Double? { wifi.share(slot: slot) }

    /// P(on external power) in an hour-of-week slot, or `nil` when the power source was never known.
    public func chargingShare(slot: Int) -> Double? { charging.share(slot: slot) }

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

extension ConditionHabits {
    /// Writes the habits (``LearnedPolicy/savedState()``).
    func write(to w: inout BinaryWriter) {
        for share in [wifi, charging] {
            w.doubles(share.known)
            w.doubles(share.held)
            w.double(share.totalKnown)
            w.double(share.totalHeld)
        }
        w.bool(open != nil)
        if let open {
            w.double(open.time)
            w.double(open.counted)
            w.conditions(open.conditions)
            w.int32(open.offset)
        }
    }

    /// Reads what ``write(to:)`` wrote.
    init(reading r: inout BinaryReader) throws {
        self.init()
        func share() throws -> Share {
            let s = Share(known: try r.doubles(), held: try r.doubles(), totalKnown: try r.double(), totalHeld: try r.double())
            guard s.known.count == HourOfWeek.count, s.held.count == HourOfWeek.count else { throw BinaryReader.Malformed() }
            return s
        }
        wifi = try share()
        charging = try share()
        if try r.bool() {
            open = Open(time: try r.double(), counted: try r.double(), conditions: try r.conditions(), offset: try r.int32())
        }
    }
}
