import FetchCastCore
import Foundation

extension DeviceModel {
    /// The fewest pickups in a window of the day, on days of its kind, for the pickup clock to
    /// speak of it (valuing a fetch, or placing a look before it).
    static let pickupMinimumDays = 3
    /// The fewest of those days whose first session opened the app, for the pickup clock to
    /// value the app's fetch: a reason never cites fewer.
    static let pickupMinimumAppDays = 2

    /// What the pickup clock says of `app` in the window `(t, t + τ]` of the device's local day
    /// (``PickupLog/window(app:start:tau:days:lastLocal:halfLifeDays:)``): on how many of the
    /// recent days of the same kind the device was first used after a silence of 2 h or more in
    /// that window, and on how many of those `app` was opened in that first session; `nil`
    /// before any day of the kind.
    /// - Complexity: O(``PickupLog/capacity`` + ``HabitLog/dayCapacity``).
    /// A window whose kind of day holds a pickup on fewer than ``pickupMinimumDays`` days is
    /// counted over the days of either kind (``PickupWindow/everyDay``): a thin weekend history
    /// borrows the weekdays' pickups, as the looks' table does.
    public func pickupWindow(app: Int32, at t: Double) -> PickupWindow? {
        let start = t + Double(lastOffset)
        let own = pickupLog.window(
            app: app, start: start, tau: configuration.tau, days: habitLog.days, lastLocal: habitLog.lastLocal,
            halfLifeDays: configuration.halfLifeDays)
        guard (own?.pickupDays ?? 0) < Self.pickupMinimumDays else { return own }
        return pickupLog.window(
            app: app, start: start, tau: configuration.tau, days: habitLog.days, lastLocal: habitLog.lastLocal,
            halfLifeDays: configuration.halfLifeDays, everyDay: true) ?? own
    }

    /// The chance that the device's first use after a silence falls in `(t, t + τ]` and opens
    /// `app` in that first session: the recency-weighted share of the recent days of the
    /// window's kind on which it did (``PickupWindow/share``). `nil` — the pickup clock does not
    /// speak — unless a launch in the window would end a silence of at least
    /// ``PickupLog/silence`` (no launch of any app since `t + τ` − 2 h), the device has
    /// ``ModelConfiguration/habitMinimumObservedDays`` days of use, and the window held a pickup
    /// on at least ``pickupMinimumDays`` days of its kind, with the app in its first session on
    /// at least ``pickupMinimumAppDays`` of them.
    func pickupChance(app: Int32, at t: Double) -> Double? {
        guard let last = lastLaunchAny, t + configuration.tau - last >= PickupLog.silence,
              habitLog.days.count >= configuration.habitMinimumObservedDays,
              let w = pickupWindow(app: app, at: t),
              w.pickupDays >= Self.pickupMinimumDays, w.appDays >= Self.pickupMinimumAppDays
        else { return nil }
        return w.share
    }

    /// Where the device's pickups fall by time of day, for placing looks before them
    /// (``PickupLog/table(days:tau:halfLifeDays:minimumShare:minimumDays:step:)``).
    func pickupTable(minimumShare: Double) -> PickupTable {
        pickupLog.table(
            days: habitLog.days.count >= configuration.habitMinimumObservedDays ? habitLog.days : [], tau: configuration.tau,
            halfLifeDays: configuration.halfLifeDays, minimumShare: minimumShare, minimumDays: Self.pickupMinimumDays, step: 300)
    }

    /// What ``pickupTable(minimumShare:)`` depends on, besides the constants: a table made for
    /// an equal key is the same.
    var pickupTableKey: PickupTableKey {
        PickupTableKey(
            pickups: pickupLog.pickups.count, lastPickup: pickupLog.pickups.last?.local, days: habitLog.days.count,
            firstDay: habitLog.days.first, lastDay: habitLog.days.last)
    }

    /// The device's latest launch of any app.
    var lastLaunchOfAnyApp: Double? { lastLaunchAny }
}

/// What a device's pickup table depends on (``DeviceModel/pickupTableKey``).
struct PickupTableKey: Sendable, Hashable {
    var pickups: Int
    var lastPickup: Double?
    var days: Int
    var firstDay: Int32?
    var lastDay: Int32?
}
