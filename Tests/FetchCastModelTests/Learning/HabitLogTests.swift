@testable import FetchCastModel
import Foundation
import Testing

struct HabitLogTests {
    /// Local midnight of day 19_786 (Monday 2024-03-04).
    static let monday = 19_786.0 * 86_400

    static func log(_ launches: [(day: Int, hour: Double, app: Int32)]) -> HabitLog {
        var log = HabitLog()
        for l in launches { log.launched(at: monday + Double(l.day) * 86_400 + l.hour * 3600, app: l.app, isSession: true) }
        return log
    }

    @Test func dayNumbersAndWeekends() {
        #expect(HabitLog.day(Self.monday + 3600) == 19_786)
        #expect(!HabitLog.isWeekend(19_786))  // Monday
        #expect(!HabitLog.isWeekend(19_790))  // Friday
        #expect(HabitLog.isWeekend(19_791))  // Saturday
        #expect(HabitLog.isWeekend(19_792))  // Sunday
        #expect(!HabitLog.isWeekend(0))  // 1970-01-01, a Thursday
        #expect(HabitLog.isWeekend(-4))  // 1969-12-28, a Sunday
    }

    @Test func countsTheDaysOfTheSameKindWithASessionInTheWindow() {
        // news (0) at 08:00 on 9 of the 10 weekdays of two weeks (not the second Wednesday), and
        // at 10:00 on the weekends; chat (1) at noon every day, so every day is a day of use.
        var launches: [(day: Int, hour: Double, app: Int32)] = []
        for d in 0..<14 {
            launches.append((d, 12, 1))
            if d % 7 >= 5 { launches.append((d, 10, 0)) } else if d != 9 { launches.append((d, 8, 0)) }
        }
        let log = Self.log(launches.sorted { ($0.day, $0.hour) < ($1.day, $1.hour) })
        // The next Monday, window (07:45, 08:15]: 9 of the 10 weekdays before it.
        let h = log.window(app: 0, start: Self.monday + 14 * 86_400 + 7.75 * 3600, tau: 1800, halfLifeDays: 21)!
        #expect(h.days == 9 && h.observedDays == 10 && !h.weekend)
        // Weighted by recency, with a pseudo-day at the weekends' share (none at 08:00).
        #expect(h.share > 0.75 && h.share < 0.9, "\(h.share)")
        // (08:00, 08:30] does not hold a session at 08:00 exactly: the window is open at its start.
        #expect(log.window(app: 0, start: Self.monday + 14 * 86_400 + 8 * 3600, tau: 1800, halfLifeDays: 21)!.days == 0)
        // (07:30, 08:00] does.
        #expect(log.window(app: 0, start: Self.monday + 14 * 86_400 + 7.5 * 3600, tau: 1800, halfLifeDays: 21)!.days == 9)
        // The next Saturday's 07:45: weekends only, none at 08:00; at 09:45, all 4.
        let saturday = Self.monday + 19 * 86_400
        let s = log.window(app: 0, start: saturday + 7.75 * 3600, tau: 1800, halfLifeDays: 21)!
        #expect(s.days == 0 && s.observedDays == 4 && s.weekend)
        #expect(log.window(app: 0, start: saturday + 9.75 * 3600, tau: 1800, halfLifeDays: 21)!.days == 4)
    }

    @Test func placementMovesAnHoursChanceToWhereInTheHourTheSessionsFall() {
        // news at 08:00:00 on 30 days.
        let log = Self.log((0..<30).map { ($0, 8, 0) })
        let day = Self.monday + 30 * 86_400
        // (08:00, 08:30] touches hour 8 only, holds none of its 30 sessions: (0 + 4 × ½) / (30 + 4) / ½.
        #expect(abs(log.placement(app: 0, start: day + 8 * 3600, tau: 1800) - 2.0 / 34 / 0.5) < 1e-12)
        // (07:30, 08:00] touches hours 7 and 8 and holds all 30: (30 + 4 × ¼) / 34 / ¼.
        #expect(abs(log.placement(app: 0, start: day + 7.5 * 3600, tau: 1800) - 31.0 / 34 / 0.25) < 1e-12)
        // (10:00, 10:30]: no session in hour 10, the pseudo-sessions alone: the chance is kept.
        #expect(abs(log.placement(app: 0, start: day + 10 * 3600, tau: 1800) - 1) < 1e-12)
        // An app never opened: 1.
        #expect(log.placement(app: 7, start: day + 8 * 3600, tau: 1800) == 1)
        // Up to midnight: (23:30, 00:00] touches 23:00–01:00 and holds the 10 sessions at 23:50;
        // (23:15, 23:45] touches hour 23 and holds none of them.
        let late = Self.log((0..<10).map { ($0, 23 + 50.0 / 60, 0) })
        #expect(abs(late.placement(app: 0, start: day + 23.5 * 3600, tau: 1800) - (10 + 1.0) / 14 / 0.25) < 1e-12)
        #expect(abs(late.placement(app: 0, start: day + 23.25 * 3600, tau: 1800) - 2.0 / 14 / 0.5) < 1e-12)
    }

    @Test func theLatestDayCountsOnlyOnceItsWindowWasObserved() {
        // Sessions at 08:00 on days 0–2; on day 3 the last launch is at 07:00.
        var log = Self.log([(0, 8, 0), (1, 8, 0), (2, 8, 0)])
        log.launched(at: Self.monday + 3 * 86_400 + 7 * 3600, app: 1, isSession: true)
        // Asked for day 4's 07:45: day 3 is left out (its 07:45–08:15 came after its last launch).
        let h = log.window(app: 0, start: Self.monday + 4 * 86_400 + 7.75 * 3600, tau: 1800, halfLifeDays: 21)!
        #expect(h.days == 3 && h.observedDays == 3)
        // Its 06:00–06:30 had passed: then day 3 counts, with no session.
        let early = log.window(app: 0, start: Self.monday + 4 * 86_400 + 6 * 3600, tau: 1800, halfLifeDays: 21)!
        #expect(early.observedDays == 4 && early.days == 0)
    }

    @Test func theNextWindowIsTheHalfHourBeforeTheHabit() {
        let log = Self.log((0..<7).map { ($0, 8.0, Int32(0)) })
        let after = Self.monday + 7 * 86_400 + 3 * 3600
        let next = log.nextWindow(app: 0, after: after, before: after + 86_400, tau: 1800, halfLifeDays: 21, minimumShare: 0.2, minimumDays: 3)
        // The first 5-minute window start that holds 08:00 is 07:30 ((07:30, 08:00] is closed at
        // its end); the later ones up to 07:55 hold no more, so the earliest stays.
        #expect(next == Self.monday + 7 * 86_400 + 7.5 * 3600)
        // Too few days: none.
        #expect(log.nextWindow(app: 0, after: after, before: after + 86_400, tau: 1800, halfLifeDays: 21, minimumShare: 0.2, minimumDays: 8) == nil)
        // Not within the span asked.
        #expect(log.nextWindow(app: 0, after: after, before: after + 3600, tau: 1800, halfLifeDays: 21, minimumShare: 0.2, minimumDays: 3) == nil)
    }

    @Test func theNextWindowMovesToTheFullestHalfHour() {
        // Sessions spread over 07:40–08:20 (one each day at a different minute): the window holding
        // the most of them, not the first that reaches the share.
        let minutes = [40.0, 50, 55, 60, 62, 65, 70, 80, 45, 58]
        let log = Self.log(minutes.enumerated().map { ($0.offset, 7 + $0.element / 60, Int32(0)) })
        let after = Self.monday + 10 * 86_400
        let next = try! #require(log.nextWindow(
            app: 0, after: after, before: after + 86_400, tau: 1800, halfLifeDays: 1e9, minimumShare: 0.2, minimumDays: 2))
        let local = (next - after) / 60  // minutes after midnight
        // (07:35, 08:05] holds 8 of the 10; no 5-minute start holds more, and none before 07:35 as many.
        #expect(local == 7 * 60 + 35, "\(local)")
    }

    @Test func keepsABoundedWindowOfTheHistory() {
        var log = HabitLog()
        for d in 0..<200 { log.launched(at: Self.monday + Double(d) * 86_400 + 8 * 3600, app: 0, isSession: true) }
        #expect(log.sessions[0]!.count == HabitLog.sessionCapacity)
        #expect(log.days.count == HabitLog.dayCapacity)
        // Counted over the days its sessions kept cover: 64 of 64.
        let h = log.window(app: 0, start: Self.monday + 200 * 86_400 + 7.5 * 3600, tau: 1800, halfLifeDays: 21)!
        #expect(h.days == h.observedDays)
        #expect(h.observedDays > 40 && h.observedDays <= 64)
    }
}

/// Day-of-week habits (issue 39 item 4): a habit of some weekdays only is read per day of the
/// week once three weeks show it.
struct HabitLogDayOfWeekTests {
    static let monday = HabitLogTests.monday

    /// fitness (0) at 06:15 on Mondays, Wednesdays and Fridays of `weeks` weeks; chat (1) at noon
    /// every day, so that every day is a day of use.
    static func gym(weeks: Int) -> HabitLog {
        var launches: [(day: Int, hour: Double, app: Int32)] = []
        for d in 0..<(7 * weeks) {
            if [0, 2, 4].contains(d % 7) { launches.append((d, 6.25, 0)) }
            launches.append((d, 12, 1))
        }
        return HabitLogTests.log(launches)
    }

    @Test func weekdaysAreMondayFirst() {
        #expect(HabitLog.weekday(19_786) == 0)  // Monday 2024-03-04
        #expect(HabitLog.weekday(19_792) == 6)  // Sunday
        #expect(HabitLog.weekday(0) == 3)  // 1970-01-01, a Thursday
        #expect(HabitLog.weekday(-4) == 6)  // 1969-12-28, a Sunday
    }

    @Test func aHabitOfSomeWeekdaysIsReadPerDayOfTheWeekAfterThreeWeeks() throws {
        let log = Self.gym(weeks: 3)
        let tuesday = Self.monday + 22 * 86_400 + 6 * 3600  // the fourth Tuesday, (06:00, 06:30]
        let t = try #require(log.window(app: 0, start: tuesday, tau: 1800, halfLifeDays: 21))
        // Three Tuesdays counted, none with a session: read per day of the week, one pseudo-day
        // at the weekdays' share (9 of 15 weekdays, recency-weighted).
        #expect(t.weekday == 1 && t.weekdayDays == 0 && t.weekdayObservedDays == 3)
        #expect(t.days == 9 && t.observedDays == 15)
        #expect(t.share < 0.2, "\(t.share)")
        // Wednesday: 3 of 3 is what the weekdays' share gives 0.22 of the time; they speak.
        let w = try #require(log.window(app: 0, start: tuesday + 86_400, tau: 1800, halfLifeDays: 21))
        #expect(w.weekday == nil && w.weekdayDays == 3 && w.weekdayObservedDays == 3)
        #expect(w.share > 0.5, "\(w.share)")
        // Tuesday's share: the weighted Tuesdays with a session (none) plus one pseudo-day at the
        // weekdays' share, weighing what the Tuesdays weigh on average.
        func weight(_ d: Int) -> Double { pow(2, -Double(22 - d) / 21) }
        let weekdays = (0..<21).filter { $0 % 7 < 5 }  // the days of use before day 22
        let gymDays = weekdays.filter { [0, 2, 4].contains($0 % 7) }
        // The weekdays' share: one pseudo-day at the weekends' share (0) in the denominator.
        let kindShare = gymDays.map(weight).reduce(0, +) / (weekdays.map(weight).reduce(0, +) + 1)
        let tuesdays = [1, 8, 15].map(weight).reduce(0, +)
        let mean = tuesdays / 3
        let expected: Double = mean * kindShare / (tuesdays + mean)
        #expect(abs(t.share - expected) < 1e-9, "\(t.share) \(expected)")
        #expect(t.share < 0.2)
    }

    @Test func beforeThreeWeeksTheKindOfDaySpeaks() throws {
        let log = Self.gym(weeks: 2)
        let t = try #require(log.window(app: 0, start: Self.monday + 15 * 86_400 + 6 * 3600, tau: 1800, halfLifeDays: 21))
        #expect(t.weekday == nil && t.weekdayObservedDays == 2)
        #expect(t.days == 6 && t.observedDays == 10 && t.share > 0.5)
    }

    @Test func theNextLookSkipsTheDaysWithoutTheHabit() throws {
        let log = Self.gym(weeks: 4)
        // After the fifth Monday's 07:00: not Tuesday, Wednesday's (06:00, 06:30] (the window that
        // holds 06:15, earliest of equals... at 05:45 the first that holds every session).
        let after = Self.monday + 28 * 86_400 + 7 * 3600
        let next = try #require(log.nextWindow(
            app: 0, after: after, before: after + 7 * 86_400, tau: 1800, halfLifeDays: 21, minimumShare: 0.2, minimumDays: 3))
        #expect(HabitLog.weekday(HabitLog.day(next)) == 2, "\(next - after)")
        // With two weeks only, weekdays speak for Tuesday.
        let early = Self.gym(weeks: 2)
        let after2 = Self.monday + 14 * 86_400 + 7 * 3600
        let next2 = try #require(early.nextWindow(
            app: 0, after: after2, before: after2 + 7 * 86_400, tau: 1800, halfLifeDays: 21, minimumShare: 0.2, minimumDays: 3))
        #expect(HabitLog.weekday(HabitLog.day(next2)) == 1)
    }

    @Test func aFewOddLaunchesOnOneDayOfTheWeekAreNoHabit() throws {
        // chat (1) at noon daily; games (2) at 10:10 on two Tuesdays of five weeks.
        var launches: [(day: Int, hour: Double, app: Int32)] = (0..<35).map { ($0, 12, 1) }
        launches += [(8, 10 + 10.0 / 60, 2), (22, 10 + 10.0 / 60, 2), (16, 10 + 10.0 / 60, 2)]
        let log = HabitLogTests.log(launches.sorted { ($0.day, $0.hour) < ($1.day, $1.hour) })
        let tuesday = Self.monday + 36 * 86_400 + 10 * 3600
        let h = try #require(log.window(app: 2, start: tuesday, tau: 1800, halfLifeDays: 21))
        // Two of five Tuesdays: the weekdays' share is kept (2 + 1 of 25 weekdays), not raised.
        #expect(h.weekday == nil && h.weekdayDays == 2 && h.weekdayObservedDays == 5)
        #expect(h.share < 0.2, "\(h.share)")
        #expect(log.nextWindow(
            app: 2, after: tuesday - 86_400, before: tuesday + 6 * 86_400, tau: 1800, halfLifeDays: 21, minimumShare: 0.2, minimumDays: 3) == nil)
    }
}
