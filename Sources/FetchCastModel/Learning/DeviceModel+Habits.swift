import FetchCastCore
import Foundation

extension DeviceModel {
    /// What the device's history says of `app` in the window `(t, t + τ]` of its local day: on
    /// how many of the recent days before that day a session of the app started in the same
    /// window, counted over the days the habit's share was read from (``HabitLog``): the same day
    /// of the week once three of them are counted, else the same kind of day (weekday or
    /// weekend); `nil` before any such day.
    /// - Complexity: O(``HabitLog/sessionCapacity`` + ``HabitLog/dayCapacity``).
    public func habitDays(app: Int32, at t: Double) -> HabitDays? {
        habit(app: app, at: t).map { h in
            if let weekday = h.weekday {
                HabitDays(days: h.weekdayDays, of: h.weekdayObservedDays, weekend: h.weekend, weekday: weekday)
            } else {
                HabitDays(days: h.days, of: h.observedDays, weekend: h.weekend, weekday: nil)
            }
        }
    }

    /// ``HabitLog/window(app:start:tau:halfLifeDays:)`` for `(t, t + τ]` on the device's clock.
    func habit(app: Int32, at t: Double) -> Habit? {
        habitLog.window(app: app, start: t + Double(lastOffset), tau: configuration.tau, halfLifeDays: configuration.halfLifeDays)
    }

    /// Pseudo-days at the chance from the gaps and hours that a habit's share starts from: 4 was
    /// best of 1, 2, 4 and 8 for the log loss of ``HabitLikelihood`` on the development trace's
    /// training users and the archetypes of seed 1 (with 1 the habit clock's near-zero chances
    /// away from its window made its log loss worse than the gaps' and hours' on those users;
    /// hit rates moved by at most 0.002). docs/model.md, "How good the habit clock is".
    static let habitPriorDays = 4.0

    /// The chance of a session of the outlook's app in `(t, t + τ]` that its habit gives, when
    /// the app has not been opened for ``ModelConfiguration/habitIdleHours`` and its habit log
    /// speaks (at least ``ModelConfiguration/habitMinimumObservedDays`` days of use, at most
    /// ``ModelConfiguration/habitMaximumDailySessions`` sessions a day over them): the
    /// recency-weighted share of the days counted with a session in the window
    /// (``HabitLog/window(app:start:tau:halfLifeDays:)``), with ``habitPriorDays`` more pseudo-days at
    /// `base` (the chance the gaps and hours give without the habit) moved to where in its hours
    /// the app's sessions fall (``HabitLog/placement(app:start:tau:)``, at most 1), times the app's activity after its present silence
    /// (a habit that stopped fades as an unused app's hours do). It replaces `base`: a habit of
    /// weeks knows which half hour holds the session, the gaps' bins do not.
    func habitChance(_ o: AppOutlook, at t: Double, base: Double) -> Double? {
        if let last = o.lastLaunch, t - last < configuration.habitIdleHours * 3600 { return nil }
        guard habitLog.speaks(
                app: o.app, minimumObservedDays: configuration.habitMinimumObservedDays,
                maximumDailySessions: configuration.habitMaximumDailySessions),
              let h = habit(app: o.app, at: t)
        else { return nil }
        let placed = min(1, base * habitLog.placement(app: o.app, start: t + Double(lastOffset), tau: configuration.tau))
        return (h.weightedDays + Self.habitPriorDays * placed) / (h.weightedObserved + Self.habitPriorDays) * o.activity
    }

    /// The earliest moment (Unix seconds) in the window `(t, t + τ]` at which, by time of day,
    /// a session of `app` that the habit log keeps started on some day
    /// (``HabitLog/earliestSession(app:start:tau:)``); `nil` when none did.
    func earliestHabitSession(app: Int32, after t: Double) -> Double? {
        habitLog.earliestSession(app: app, start: t + Double(lastOffset), tau: configuration.tau).map { t + $0 }
    }

    /// The start (Unix seconds) of the next window of `app`'s day, after `after` and before
    /// `before`, that its habit fills (``HabitLog/nextWindow(app:after:before:tau:halfLifeDays:minimumShare:minimumDays:minimumObservedDays:maximumDailySessions:looseShare:step:)``):
    /// where an anticipatory look goes.
    func nextHabitWindow(app: Int32, after: Double, before: Double, minimumShare: Double, looseShare: Double? = nil) -> Double? {
        let offset = Double(lastOffset)
        return habitLog.nextWindow(
            app: app, after: after + offset, before: before + offset, tau: configuration.tau,
            halfLifeDays: configuration.halfLifeDays, minimumShare: minimumShare, minimumDays: configuration.habitMinimumDays,
            minimumObservedDays: configuration.habitMinimumObservedDays, maximumDailySessions: configuration.habitMaximumDailySessions,
            looseShare: looseShare
        ).map { $0 - offset }
    }
}

/// On how many of the recent days a device opened an app in a window of the day: the counts a
/// habit's share was read from (``DeviceModel/habitDays(app:at:)``), as a person counts them on
/// their own calendar.
public struct HabitDays: Sendable, Hashable {
    /// Days with a session of the app in the window.
    public var days: Int
    /// Days counted: days of use before the window's day, of its day of the week when
    /// ``weekday`` is set, else of its kind (weekday or weekend).
    public var of: Int
    /// Whether the window's day is a Saturday or a Sunday.
    public var weekend: Bool
    /// The window's day of the week (0 = Monday … 6 = Sunday) when the days counted are that day
    /// of the week; `nil` when they are the window's kind of day.
    public var weekday: Int?

    /// The days counted, named as a person reads them: "Mondays", "weekdays", "weekend day".
    public var daysCounted: String {
        if let weekday {
            let name = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"][weekday]
            return of == 1 ? name : name + "s"
        }
        return weekend ? (of == 1 ? "weekend day" : "weekend days") : (of == 1 ? "weekday" : "weekdays")
    }
}
