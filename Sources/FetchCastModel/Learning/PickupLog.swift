import FetchCastCore
import Foundation

/// The pickup clock's memory: the device's latest *pickups* — launches after a silence of the
/// whole device (no launch of any app) of at least ``silence`` — at their local times, each with
/// how long the silence before it lasted and the apps opened in its first session (the launches
/// within τ of it, the pickup's own included).
///
/// Each pickup ends a silence, so the log also knows, for a moment of a past day, whether the
/// device was then *still silent* in a silence its next launch would end as a pickup: the
/// moments from 2 h − τ after a silence began to its pickup. For a window of the day
/// `(t, t + τ]` the model reads the pickup clock's *hazard*: of the recent days of the window's
/// kind still silent at `t`'s time of day, on how many the device was first used by `t + τ`; and,
/// of all its recent pickups, at any time of day, how many began with an app — the launch that
/// ended the silence (``window(app:start:tau:halfLifeDays:everyDay:)``). At `t` the device's own
/// silence is known: once it has lasted long enough that a launch in the window would be a
/// pickup, the product of the two shares is the chance a look at `t` values the app's fetch
/// with, and the reason gives both counts (docs/model.md, "The pickup clock").
///
/// - Complexity: O(1) amortised per launch; O(``capacity``) memory, whatever the history.
struct PickupLog: Sendable, Hashable, Codable {
    /// A silence of the whole device at least this long (seconds) makes its next launch a pickup.
    static let silence = 7200.0
    /// Pickups kept: the latest (about five weeks at three a day).
    static let capacity = 96

    /// One pickup: its local time (Unix seconds plus the UTC offset then), how long the device
    /// had been silent before it, and the apps opened within τ of it, in the order first opened,
    /// each with how long after the pickup.
    struct Pickup: Sendable, Hashable, Codable {
        var local: Double
        var silence: Double
        var apps: [Int32]
        var after: [Double]

        /// How long after the pickup `app` was first opened in its first session (`nil`: not).
        func opened(_ app: Int32) -> Double? { apps.firstIndex(of: app).map { after[$0] } }
    }

    /// The latest pickups, ascending.
    var pickups: [Pickup] = [] {
        didSet { longSilence = Self.longSilence(of: pickups) }
    }
    /// The silence that at least one in ten of the kept pickups ended (the 90th percentile of
    /// their silences; 0 without a pickup): how long this device is usually silent at most
    /// before it is used again (``DeviceModel/pickupLongestSilence``). Counted again whenever
    /// the pickups change (a pickup added or a first session's app noted: a few times a day; an
    /// initialiser reading them calls ``recountLongSilence()``), since the pickup clock asks for it at every step of its scans.
    private(set) var longSilence = 0.0

    /// Counts ``longSilence`` again: for an initialiser, where `didSet` does not run
    /// (``init(reading:)``).
    mutating func recountLongSilence() { longSilence = Self.longSilence(of: pickups) }

    /// The 90th percentile of `pickups`' silences (the nearest rank), 0 without one.
    static func longSilence(of pickups: [Pickup]) -> Double {
        guard !pickups.isEmpty else { return 0 }
        let silences = pickups.map(\.silence).sorted()
        return silences[min(silences.count - 1, Int(Double(silences.count) * 0.9))]
    }

    /// Notes a launch of `app` at local time `local`, `silence` seconds after the device's
    /// previous launch of any app (`nil`: the device's first launch, whose silence is unknown and
    /// which is no pickup).
    mutating func launched(at local: Double, app: Int32, silence: Double?, tau: Double) {
        if let silence, silence >= Self.silence {
            pickups.append(Pickup(local: local, silence: silence, apps: [app], after: [0]))
            if pickups.count > Self.capacity { pickups.removeFirst(pickups.count - Self.capacity) }
        } else if let last = pickups.last, local >= last.local, local - last.local <= tau, !last.apps.contains(app) {
            pickups[pickups.count - 1].apps.append(app)
            pickups[pickups.count - 1].after.append(local - last.local)
        }
    }

    /// What the log says of the local window `(start, start + tau]`: the days before the
    /// window's day, of its kind (of either kind when `everyDay`), on which the device was still
    /// silent at the window's start in a silence its next launch would end as a pickup (begun at
    /// least 2 h − τ before: the days *at risk*); those whose pickup came in the window; and, of
    /// the pickups before the window's day at any time of day, those that were a launch of `app`
    /// (a fetch at the window's start keeps that launch fresh). The app's share is counted over
    /// every pickup, not only the window's: a window's own days are too few to tell a heavy
    /// user's first apps apart. Only the pickup's own app counts: the apps opened after it in its first session
    /// are the launch's reactive look's to fetch, which covers more of the session than a fetch
    /// before the pickup (docs/model.md, "The pickup clock").
    /// - Parameters:
    ///   - halfLifeDays: The recency weighting: a day this long before the window counts half.
    ///   - everyDay: Count the days of either kind (the fallback when the window's kind holds
    ///     too few pickups in the window).
    /// - Returns: `nil` when no day is at risk.
    /// - Complexity: O(``capacity`` + the days the pickups' silences span).
    func window(app: Int32, start: Double, tau: Double, halfLifeDays: Double, everyDay: Bool = false) -> PickupWindow? {
        guard var result = daysAtRisk(start: start, tau: tau, halfLifeDays: halfLifeDays, everyDay: everyDay) else { return nil }
        result.count(firstLaunches(beforeDay: HabitLog.day(start), halfLifeDays: halfLifeDays), of: app)
        return result
    }

    /// The days part of ``window(app:start:tau:halfLifeDays:everyDay:)``, which no app changes:
    /// the days at risk and those first used in the window (the first launches not counted).
    /// - Complexity: O(``capacity`` + the days the pickups' silences span).
    func daysAtRisk(start: Double, tau: Double, halfLifeDays: Double, everyDay: Bool = false) -> PickupWindow? {
        let windowDay = HabitLog.day(start)
        let x = start - Double(windowDay) * 86_400
        let weekend = HabitLog.isWeekend(windowDay)
        var result = PickupWindow(weekend: weekend, everyDay: everyDay, start: start, end: start + tau)
        for p in pickups {
            // The moments at risk before this pickup: [silence start + 2 h − τ, pickup).
            let from = p.local - p.silence + Self.silence - tau
            var d = Int32(((from - x) / 86_400).rounded(.up))
            while d < windowDay {
                let xd = Double(d) * 86_400 + x
                guard xd < p.local else { break }
                defer { d += 1 }
                guard everyDay || HabitLog.isWeekend(d) == weekend else { continue }
                let w = exp2(-Double(windowDay - d) / halfLifeDays)
                result.observedDays += 1
                result.weightedObserved += w
                guard p.local <= xd + tau else { continue }
                result.pickupDays += 1
                result.weightedPickup += w
            }
        }
        return result.observedDays > 0 ? result : nil
    }

    /// The pickups before local day `windowDay`, at any time of day, and per app those that
    /// began with it, recency-weighted as seen from that day: the same for every window of the
    /// day, so counted once for all of them.
    /// - Complexity: O(``capacity``).
    func firstLaunches(beforeDay windowDay: Int32, halfLifeDays: Double) -> FirstLaunches {
        var result = FirstLaunches(day: windowDay)
        for p in pickups where HabitLog.day(p.local) < windowDay {
            let w = exp2(-Double(windowDay - HabitLog.day(p.local)) / halfLifeDays)
            result.pickups += 1
            result.weightedPickups += w
            if let app = p.apps.first { result.byApp[app, default: (0, 0)].count += 1; result.byApp[app]!.weighted += w }
        }
        return result
    }

    /// The pickups before a day and, per app, those that began with it (``firstLaunches(beforeDay:halfLifeDays:)``).
    struct FirstLaunches {
        var day: Int32
        var pickups = 0
        var weightedPickups = 0.0
        var byApp: [Int32: (count: Int, weighted: Double)] = [:]
    }
}

/// What a device's history says of one window of the day `(start, end]`: on how many recent days
/// of its kind the device was still silent at its start (in a silence its next launch would end
/// as a pickup) and on how many of those it was first used in the window; and of the device's
/// recent pickups at any time of day, how many began with a launch of an app.
public struct PickupWindow: Sendable, Hashable {
    /// Days at risk: of the window's kind, still silent at the window's start (unweighted, as a
    /// person counts).
    public var observedDays = 0
    /// Of those, days first used in the window.
    public var pickupDays = 0
    /// The same, recency-weighted.
    var weightedObserved = 0.0
    var weightedPickup = 0.0
    /// The pickups before the window's day, at any time of day, and those whose first launch
    /// was of the app.
    public var pickups = 0
    public var appPickups = 0
    var weightedPickups = 0.0
    var weightedAppPickups = 0.0
    /// Whether the window's day is a weekend (else a weekday).
    public var weekend: Bool
    /// Whether days of either kind are counted (else only days of the window's kind).
    public var everyDay: Bool
    /// The window, local time.
    public var start: Double
    public var end: Double

    /// Counts the pickups before the window's day and those that began with `app`.
    mutating func count(_ first: PickupLog.FirstLaunches, of app: Int32) {
        pickups = first.pickups
        weightedPickups = first.weightedPickups
        appPickups = first.byApp[app]?.count ?? 0
        weightedAppPickups = first.byApp[app]?.weighted ?? 0
    }

    /// The recency-weighted share of the days at risk first used in the window, times the
    /// recency-weighted share of the pickups that began with the app: the chance a fetch at the
    /// window's start makes the launch that ends the silence fresh.
    public var share: Double {
        guard weightedObserved > 0, weightedPickups > 0 else { return 0 }
        return weightedPickup / weightedObserved * weightedAppPickups / weightedPickups
    }
}
