import FetchCastCore
import Foundation

/// The pickup clock's memory: the device's latest *pickups* — launches after a silence of the
/// whole device (no launch of any app) of at least ``silence`` — at their local times, each with
/// the apps opened in its first session (the launches within τ of it, the pickup's own included).
///
/// From it and the days of use (``HabitLog/days``) the model reads, for a window of the day
/// `(t, t + τ]`, on how many of the recent days of the same kind (weekday or weekend) the device
/// was first used after a silence in that window, and on how many of those an app was opened in
/// that first session (``window(app:start:tau:days:lastLocal:halfLifeDays:)``): the chance a
/// look before the pickup values the app's fetch with, and the reason it gives
/// (docs/model.md, "The pickup clock").
///
/// - Complexity: O(1) amortised per launch; O(``capacity``) memory, whatever the history.
struct PickupLog: Sendable, Hashable, Codable {
    /// A silence of the whole device at least this long (seconds) makes its next launch a pickup.
    static let silence = 7200.0
    /// Pickups kept: the latest (about five weeks at three a day).
    static let capacity = 96

    /// One pickup: its local time (Unix seconds plus the UTC offset then), and the apps opened
    /// within τ of it, in the order first opened, each with how long after the pickup.
    struct Pickup: Sendable, Hashable, Codable {
        var local: Double
        var apps: [Int32]
        var after: [Double]

        /// How long after the pickup `app` was first opened in its first session (`nil`: not).
        func opened(_ app: Int32) -> Double? { apps.firstIndex(of: app).map { after[$0] } }
    }

    /// The latest pickups, ascending.
    var pickups: [Pickup] = []

    /// Notes a launch of `app` at local time `local`, `silence` seconds after the device's
    /// previous launch of any app (`nil`: the device's first launch, whose silence is unknown and
    /// which is no pickup).
    mutating func launched(at local: Double, app: Int32, silence: Double?, tau: Double) {
        if let silence, silence >= Self.silence {
            pickups.append(Pickup(local: local, apps: [app], after: [0]))
            if pickups.count > Self.capacity { pickups.removeFirst(pickups.count - Self.capacity) }
        } else if let last = pickups.last, local >= last.local, local - last.local <= tau, !last.apps.contains(app) {
            pickups[pickups.count - 1].apps.append(app)
            pickups[pickups.count - 1].after.append(local - last.local)
        }
    }

    /// The local day number of the oldest pickup kept when the log is full (older days are not
    /// counted: their pickups were let go), else `Int32.min`.
    private var from: Int32 { pickups.count >= Self.capacity ? HabitLog.day(pickups[0].local) : Int32.min }

    /// What the log says of the local window `(start, start + tau]`: the days of its kind
    /// counted (days of use before the window's day, and its own day too when the device was
    /// last observed after the window), the days among them with a pickup in the window, and the
    /// days with a pickup in it whose first session opened `app` by the window's end (a fetch at
    /// the window's start keeps that launch fresh).
    /// - Parameters:
    ///   - days: The local days of use, ascending (``HabitLog/days``).
    ///   - lastLocal: The local time of the latest launch.
    ///   - halfLifeDays: The recency weighting: a day this long before the window counts half.
    /// - Returns: `nil` when no day of the kind is counted.
    /// - Complexity: O(``capacity`` + ``HabitLog/dayCapacity``).
    ///   - everyDay: Count the days of either kind (the fallback when the window's kind holds
    ///     too few pickups).
    func window(
        app: Int32, start: Double, tau: Double, days: [Int32], lastLocal: Double?, halfLifeDays: Double, everyDay: Bool = false
    ) -> PickupWindow? {
        let windowDay = HabitLog.day(start)
        let x = start - Double(windowDay) * 86_400
        let weekend = HabitLog.isWeekend(windowDay)
        let lastDay = lastLocal.map(HabitLog.day)
        let oldest = from
        func counted(_ d: Int32) -> Bool {
            guard d < windowDay || (d == windowDay && d == lastDay), d >= oldest, everyDay || HabitLog.isWeekend(d) == weekend else {
                return false
            }
            if d == lastDay, let lastLocal { return Double(d) * 86_400 + x + tau <= lastLocal }
            return true
        }
        func weight(_ d: Int32) -> Double { exp2(-Double(windowDay - d) / halfLifeDays) }
        var result = PickupWindow(weekend: weekend, everyDay: everyDay, start: start, end: start + tau)
        for d in days where counted(d) {
            result.observedDays += 1
            result.weightedObserved += weight(d)
        }
        guard result.observedDays > 0 else { return nil }
        var seen: Int32?
        for p in pickups {
            // The day whose window (d·86400 + x, d·86400 + x + tau] could hold the pickup.
            let u = p.local - x
            let d = Int32((u / 86_400).rounded(.up)) - 1
            guard u - Double(d) * 86_400 <= tau, seen != d, counted(d) else { continue }
            seen = d  // pickups are at least 2 h apart: one a window and day
            result.pickupDays += 1
            result.weightedPickup += weight(d)
            if let after = p.opened(app), p.local + after <= Double(d) * 86_400 + x + tau {
                result.appDays += 1
                result.weightedApp += weight(d)
            }
        }
        return result
    }

    /// The windows of the day that hold a pickup often enough to look before: for each kind of
    /// day (0 weekday, 1 weekend) and each `step` of the day `j`, whether the window
    /// `(j·step, j·step + tau]` held a pickup on at least `minimumShare` of the recency-weighted
    /// days of that kind and on at least `minimumDays` days; a kind with no such window falls
    /// back to the days of either kind (as ``window(app:start:tau:days:lastLocal:halfLifeDays:everyDay:)``
    /// does for a window of too few pickups). Weights are relative to the latest day of use;
    /// every day of use counts (where to look, not what it is worth).
    /// - Complexity: O(``capacity`` log ``capacity`` + the steps of a day).
    func table(days: [Int32], tau: Double, halfLifeDays: Double, minimumShare: Double, minimumDays: Int, step: Double) -> PickupTable {
        let slots = Int((86_400 / step).rounded(.up))
        var table = PickupTable(step: step, slots: slots)
        guard let reference = days.last else { return table }
        let oldest = from
        func weight(_ d: Int32) -> Double { exp2(-Double(reference - d) / halfLifeDays) }
        // Index 0 weekdays, 1 weekends, 2 every day.
        var observed = [0.0, 0.0, 0.0]
        for d in days where d >= oldest {
            observed[HabitLog.isWeekend(d) ? 1 : 0] += weight(d)
            observed[2] += weight(d)
        }
        var entries: [[(offset: Double, weight: Double)]] = [[], [], []]
        for p in pickups {
            let d = HabitLog.day(p.local)
            guard d >= oldest else { continue }
            let offset = p.local - Double(d) * 86_400
            entries[HabitLog.isWeekend(d) ? 1 : 0].append((offset, weight(d)))
            // After midnight: also the late end of the day before's windows.
            entries[HabitLog.isWeekend(d - 1) ? 1 : 0].append((offset + 86_400, weight(d)))
            entries[2].append((offset, weight(d)))
            entries[2].append((offset + 86_400, weight(d)))
        }
        var share = [[Double]](repeating: [Double](repeating: 0, count: slots), count: 3)
        var qualifies = [[Bool]](repeating: [Bool](repeating: false, count: slots), count: 3)
        for kind in 0..<3 where observed[kind] > 0 {
            let sorted = entries[kind].sorted { $0.offset < $1.offset }
            var lo = 0, hi = 0, sum = 0.0
            for j in 0..<slots {
                let x = Double(j) * step
                while hi < sorted.count, sorted[hi].offset <= x + tau { sum += sorted[hi].weight; hi += 1 }
                while lo < hi, sorted[lo].offset <= x { sum -= sorted[lo].weight; lo += 1 }
                share[kind][j] = sum / observed[kind]
                qualifies[kind][j] = share[kind][j] >= minimumShare && hi - lo >= minimumDays
            }
        }
        for kind in 0..<2 {
            let own = qualifies[kind].contains(true)
            table.share[kind] = own ? share[kind] : share[2]
            table.qualifies[kind] = own ? qualifies[kind] : qualifies[2]
        }
        return table
    }
}

/// Where a device's pickups fall by time of day (``PickupLog/table(days:tau:halfLifeDays:minimumShare:minimumDays:step:)``).
struct PickupTable: Sendable {
    var step: Double
    var slots: Int
    /// Per kind of day (0 weekday, 1 weekend) and step of the day: the weighted share of days
    /// with a pickup in the window starting there.
    var share: [[Double]]
    var qualifies: [[Bool]]

    init(step: Double, slots: Int) {
        self.step = step
        self.slots = slots
        share = [[Double]](repeating: [Double](repeating: 0, count: slots), count: 2)
        qualifies = [[Bool]](repeating: [Bool](repeating: false, count: slots), count: 2)
    }

    /// Whether any window of either kind of day qualifies.
    var isEmpty: Bool { !qualifies[0].contains(true) && !qualifies[1].contains(true) }

    /// The start (local time) of the first qualifying window strictly after `after` and before
    /// `before`, moved to the fullest window of the τ that follows it (the latest of equals: a
    /// fetch there keeps more of the first session after the pickup fresh).
    func next(after: Double, before: Double, tau: Double) -> Double? {
        guard !isEmpty else { return nil }
        var t = ((after / step).rounded(.down) + 1) * step
        var first: Double?
        var found: Double?
        var best = 0.0
        while t < before {
            let d = HabitLog.day(t)
            let kind = HabitLog.isWeekend(d) ? 1 : 0
            let j = min(slots - 1, Int(((t - Double(d) * 86_400) / step).rounded(.down)))
            if let first {
                if t > first + tau { break }
                if share[kind][j] >= best { (found, best) = (t, share[kind][j]) }
            } else if qualifies[kind][j] {
                (first, found, best) = (t, t, share[kind][j])
            }
            t += step
        }
        return found
    }
}

/// What a device's history says of one window of the day: on how many recent days of its kind
/// the device was first used after a silence in it, and on how many of those an app was opened
/// in that first session.
public struct PickupWindow: Sendable, Hashable {
    /// Days of the window's kind counted (unweighted, as a person counts).
    public var observedDays = 0
    /// Of those, days with a pickup in the window.
    public var pickupDays = 0
    /// Of those, days whose pickup in the window opened the app in its first session by the
    /// window's end.
    public var appDays = 0
    /// The same, recency-weighted.
    var weightedObserved = 0.0
    var weightedPickup = 0.0
    var weightedApp = 0.0
    /// Whether the window's day is a weekend (else a weekday).
    public var weekend: Bool
    /// Whether days of either kind are counted (else only days of the window's kind).
    public var everyDay: Bool
    /// The window, local time.
    public var start: Double
    public var end: Double

    /// The recency-weighted share of the days counted whose pickup in the window opened the app
    /// by the window's end.
    public var share: Double { weightedObserved > 0 ? weightedApp / weightedObserved : 0 }
}
