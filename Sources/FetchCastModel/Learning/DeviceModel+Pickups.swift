import FetchCastCore
import Foundation

extension DeviceModel {
    /// The fewest days at risk (still silent at a window's start) of a window's kind for the
    /// pickup clock to speak of it; a kind with fewer days first used in the window than this
    /// borrows the days of either kind.
    static let pickupMinimumDays = 3
    /// The fewest of those days first used in the window with a launch of the app, for the
    /// pickup clock to value the app's fetch: a reason never cites fewer.
    static let pickupMinimumAppDays = 2
    /// The fewest days of use the device's log must cover for the pickup clock to speak: a
    /// week, so that both kinds of day have been seen (a habit speaks sooner,
    /// ``ModelConfiguration/habitMinimumObservedDays``; the pickup clock from 2 days did no
    /// better on the development trace's training users, docs/model.md).
    static let pickupMinimumObservedDays = 7

    /// What the pickup clock says of `app` in the window `(t, t + τ]` of the device's local day
    /// (``PickupLog/window(app:start:tau:halfLifeDays:everyDay:)``): of the recent days of the
    /// same kind on which the device was still silent at `t`'s time of day (in a silence its next
    /// launch would end as a pickup), on how many it was first used by `t + τ`, and on how many
    /// of those with a launch of `app`; `nil` when no such day is known.
    /// A window whose kind holds fewer than ``pickupMinimumDays`` days first used in it is
    /// counted over the days of either kind (``PickupWindow/everyDay``): a thin weekend history
    /// borrows the weekdays'.
    /// - Complexity: O(``PickupLog/capacity`` + the days its silences span).
    public func pickupWindow(app: Int32, at t: Double) -> PickupWindow? {
        guard var w = pickupDays(at: t) else { return nil }
        w.count(pickupLog.firstLaunches(beforeDay: HabitLog.day(w.start), halfLifeDays: configuration.halfLifeDays), of: app)
        return w
    }

    /// The days part of ``pickupWindow(app:at:)``, the same for every app: the days at risk at
    /// `t`'s time of day and those first used within τ, of `t`'s kind of day or of either.
    func pickupDays(at t: Double) -> PickupWindow? {
        let start = t + Double(lastOffset)
        let tau = configuration.tau, halfLife = configuration.halfLifeDays
        let own = pickupLog.daysAtRisk(start: start, tau: tau, halfLifeDays: halfLife)
        guard (own?.pickupDays ?? 0) < Self.pickupMinimumDays else { return own }
        return pickupLog.daysAtRisk(start: start, tau: tau, halfLifeDays: halfLife, everyDay: true) ?? own
    }

    /// Whether the pickup clock may speak at `t`: a launch in `(t, t + τ]` would end a silence of
    /// the device of at least ``PickupLog/silence`` (no launch of any app since `t + τ` − 2 h)
    /// that has not yet lasted ``pickupLongestSilence`` at `t`, and the device has
    /// ``pickupMinimumObservedDays`` days of use and ``pickupMinimumDays`` pickups.
    func pickupClockSpeaks(at t: Double) -> Bool {
        guard let last = lastLaunchAny, t + configuration.tau - last >= PickupLog.silence,
              t - last < pickupLongestSilence
        else { return false }
        return habitLog.days.count >= Self.pickupMinimumObservedDays && pickupLog.pickups.count >= Self.pickupMinimumDays
    }

    /// The chance that the device, silent since its last launch, is first used in `(t, t + τ]`
    /// with a launch of `app`: the recency-weighted share of the
    /// recent days at risk of the window's kind on which it did (``PickupWindow/share``). `nil`
    /// — the pickup clock does not speak — for an app whose own habit clock speaks (opened at most
    /// ``ModelConfiguration/habitMaximumDailySessions`` times a day: its looks ahead of habits
    /// cover it, ``HabitLog/speaks(app:minimumObservedDays:maximumDailySessions:)``), and unless ``pickupClockSpeaks(at:)``, at least
    /// ``pickupMinimumDays`` days are at risk, and the device was first used in the window with
    /// the app on at least ``pickupMinimumAppDays`` of them.
    func pickupChance(app: Int32, at t: Double) -> Double? {
        guard pickupClockSpeaks(at: t), pickupClockSpeaks(for: app), let w = pickupWindow(app: app, at: t) else { return nil }
        return Self.pickupChance(w)
    }

    /// Whether the pickup clock may speak for `app`: its own habit clock does not.
    func pickupClockSpeaks(for app: Int32) -> Bool {
        !habitLog.speaks(
            app: app, minimumObservedDays: configuration.habitMinimumObservedDays, maximumDailySessions: configuration.habitMaximumDailySessions)
    }

    /// ``pickupChance(app:at:)`` of a window counted for an app.
    static func pickupChance(_ w: PickupWindow) -> Double? {
        guard w.observedDays >= pickupMinimumDays, w.appPickups >= pickupMinimumAppDays else { return nil }
        return w.share
    }

    /// ``pickupChance(app:at:)`` for each of `apps` whose pickup clock may speak
    /// (``pickupClockSpeaks(for:)``, asked once by the caller), the days counted once for all and
    /// the first launches once a day (`firstLaunches` keeps them between calls): what a scan of
    /// many instants asks.
    func pickupChances(
        _ apps: [Int32], at t: Double, firstLaunches: inout PickupLog.FirstLaunches?, _ body: (Double) -> Void
    ) {
        guard pickupClockSpeaks(at: t), let days = pickupDays(at: t) else { return }
        let day = HabitLog.day(days.start)
        if firstLaunches?.day != day { firstLaunches = pickupLog.firstLaunches(beforeDay: day, halfLifeDays: configuration.halfLifeDays) }
        for app in apps {
            var w = days
            w.count(firstLaunches!, of: app)
            if let c = Self.pickupChance(w) { body(c) }
        }
    }

    /// The device's latest launch of any app.
    var lastLaunchOfAnyApp: Double? { lastLaunchAny }

    /// How long after the device's last launch the pickup clock still speaks, seconds: the
    /// silence that one in ten of its kept pickups ended (``PickupLog/longSilence``), at least
    /// ``LearnedPolicy/pickupLongestSilence`` (14 h) and at most
    /// ``LearnedPolicy/pickupLongestSilenceCeiling`` (24 h). A silence longer than the device's
    /// own long ones is more often a device switched off or a trace's gap than a late first use;
    /// a device used three times a day at no set hour is often silent 16 h and is still looked for.
    package var pickupLongestSilence: Double {
        min(LearnedPolicy.pickupLongestSilenceCeiling, max(LearnedPolicy.pickupLongestSilence, pickupLog.longSilence))
    }

    /// Why the pickup clock looks before none of the device's pickups from `start` on, when it
    /// is for a rule of its own: fewer than ``pickupMinimumObservedDays`` days of use, fewer than
    /// ``pickupMinimumDays`` pickups, or a silence since the device's last launch of at least
    /// ``pickupLongestSilence`` by `start` (``LearnedPolicy/schedulePickupLook(now:)``,
    /// ``LearnedPolicy/seekPickupLook(from:)``). `nil` when the clock may look: whether a look then
    /// fetches is the bar's to say. What an empty plan's note names (issue 39).
    package func pickupClockRule(from start: Double) -> PickupClockRule? {
        pickupClockFacts.rule(from: start)
    }

    /// What ``pickupClockRule(from:)`` reads of the model.
    package var pickupClockFacts: PickupClockFacts {
        PickupClockFacts(
            observedDays: habitLog.days.count, pickups: pickupLog.pickups.count, lastLaunch: lastLaunchAny,
            longestSilence: pickupLongestSilence)
    }
}

/// What the pickup clock's rules (``DeviceModel/pickupClockRule(from:)``) read of a device's
/// model, apart from it: what a plan table keeps for its empty-plan note.
package struct PickupClockFacts: Sendable, Hashable {
    /// Days of use, pickups, the last launch of any app (Unix seconds) and
    /// ``DeviceModel/pickupLongestSilence``.
    package var observedDays: Int, pickups: Int, lastLaunch: Double?, longestSilence: Double

    package init(observedDays: Int, pickups: Int, lastLaunch: Double?, longestSilence: Double) {
        (self.observedDays, self.pickups, self.lastLaunch, self.longestSilence) = (observedDays, pickups, lastLaunch, longestSilence)
    }

    /// ``DeviceModel/pickupClockRule(from:)``.
    package func rule(from start: Double) -> PickupClockRule? {
        if observedDays < DeviceModel.pickupMinimumObservedDays { return .fewDays(observedDays) }
        if pickups < DeviceModel.pickupMinimumDays { return .fewPickups(pickups) }
        if let lastLaunch, start >= lastLaunch + longestSilence {
            return .longSilence(lastLaunch: lastLaunch, limit: longestSilence)
        }
        return nil
    }
}

/// The rule that keeps the pickup clock from looking before a device's next pickup
/// (``DeviceModel/pickupClockRule(from:)``), with the device's own count or time.
package enum PickupClockRule: Sendable, Hashable {
    /// Fewer days of use than ``DeviceModel/pickupMinimumObservedDays``: the days it has.
    case fewDays(Int)
    /// Fewer pickups than ``DeviceModel/pickupMinimumDays``: the pickups it has.
    case fewPickups(Int)
    /// Silent since its last launch (Unix seconds) for at least `limit` seconds, the device's
    /// ``DeviceModel/pickupLongestSilence``.
    case longSilence(lastLaunch: Double, limit: Double)

    /// The rule's limits, as the note states them.
    package static var minimumDays: Int { DeviceModel.pickupMinimumObservedDays }
    package static var minimumPickups: Int { DeviceModel.pickupMinimumDays }
    package static var longestSilence: Double { LearnedPolicy.pickupLongestSilence }
    package static var longestSilenceCeiling: Double { LearnedPolicy.pickupLongestSilenceCeiling }
}
