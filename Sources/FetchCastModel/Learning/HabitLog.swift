import FetchCastCore
import Foundation

/// The habit clock's memory: each app's latest session starts at their exact local times, and
/// the local days the device was used.
///
/// Hour-of-week counts cannot tell 07:55 from 08:55; a habit can. From this log the model reads,
/// for any window of the day (t, t + τ], on how many of the recent days of the same kind (weekday
/// or weekend) a session of the app started in it: the day frequency that anticipatory looks are
/// placed by and valued with (``DeviceModel/habit(app:at:)``, docs/model.md "Habits").
///
/// - Complexity: O(``sessionCapacity``) per session start and O(``dayCapacity``) per new day of
///   use, whatever the device's history: the log keeps a bounded window of it.
struct HabitLog: Sendable, Hashable, Codable {
    /// Session starts kept per app: the latest.
    static let sessionCapacity = 64
    /// Days of use kept: the latest.
    static let dayCapacity = 64

    /// Per app, the local times (Unix seconds plus the UTC offset at the time) of its latest
    /// session starts, ascending.
    var sessions: [Int32: [Double]] = [:]
    /// The local day numbers (days since 1970-01-01 on the device's clock) with a launch,
    /// ascending.
    var days: [Int32] = []
    /// The local time of the latest launch: how far into its day the device was observed.
    var lastLocal: Double?

    /// The local day number of a local time.
    @inline(__always)
    static func day(_ local: Double) -> Int32 { Int32((local / 86_400).rounded(.down)) }

    /// Whether a local day number is a Saturday or a Sunday (day 0, 1970-01-01, was a Thursday).
    @inline(__always)
    static func isWeekend(_ day: Int32) -> Bool {
        weekday(day) >= 5
    }

    /// The day of the week of a local day number: 0 = Monday … 6 = Sunday.
    @inline(__always)
    static func weekday(_ day: Int32) -> Int { ((Int(day) + 3) % 7 + 7) % 7 }

    /// Pseudo-days at the share of the window's kind of day (weekday or weekend) that a share read
    /// per day of the week starts from: a habit of some weekdays only (a gym on Mondays,
    /// Wednesdays and Fridays) is planned on those days, and a daily one stays near its kind's
    /// share. One, like ``otherKindDays``: the next coarser level counts as one day
    /// (docs/model.md, "Days of the week").
    static let dayOfWeekPseudoDays = 1.0
    /// The fewest days of the window's day of the week (of use, counted) before its share is read
    /// per day of the week: three weeks show a habit of some weekdays; until then the window's
    /// kind of day (weekday or weekend) speaks for it.
    static let dayOfWeekMinimumDays = 3

    /// How unlikely a day of the week's count must be at its kind's share for the day of the week
    /// to speak (``weekdayShare(_:fewAppDays:)``): less than once in ten.
    static let dayOfWeekSignificance = 0.1

    /// How unlikely a window's count on its day of the week must be at its kind's share for the
    /// day of the week to raise its share (``weekdayShare(_:fewAppDays:)``): less than once in a hundred.
    /// A look goes to the fullest window of the day, so a raise is a choice among many windows:
    /// at 0.1, four Sundays' sessions at 09:32 ± 7 minutes against the weekends' 0.55 in
    /// (09:30, 10:00] (0.09) moved the look after a Sunday session at 09:26.
    static let dayOfWeekRaiseSignificance = 0.01

    /// What a window's day of the week says, beside its kind of day.
    struct WeekdayCounts {
        /// The window's share over the days of its kind (weekday or weekend).
        var kindShare: Double
        /// Recency-weighted days of the day of the week with a session in the window, and counted.
        var weightedDays: Double
        var weightedObserved: Double
        /// Days of the day of the week counted, and those with a session in the window
        /// (unweighted).
        var days: Int
        var windowDays: Int
    }

    /// The window's share read per day of the week, or `nil` when the day of the week does not
    /// speak and the kind's share stands: at least ``dayOfWeekMinimumDays`` of its days counted,
    /// and a count that the kind's share would give less than once in 1 / ``dayOfWeekSignificance``
    /// (a binomial tail). Below the kind's share, that count is the days with a session of the
    /// app at any time (a gym on Mondays, Wednesdays and Fridays, 0 of 3 Tuesdays against 0.6
    /// of weekdays: 0.064, every Tuesday window; a window's own count is not used to lower it:
    /// a habit at 09:30 ± 7 minutes has 1 of 4 Sundays in (09:00, 09:30] as often as not);
    /// above it, the window's, with sessions on at least ``dayOfWeekMinimumDays`` of them, less
    /// than once in 1 / ``dayOfWeekRaiseSignificance`` (a meeting on Mondays only, 3 of 3
    /// against 0.2: 0.008; two odd launches on Tuesdays are no habit). The share is the weighted
    /// days of the day of the week with a session plus ``dayOfWeekPseudoDays`` at the kind's
    /// share (each weighing what those days weigh on average), over those counted plus the
    /// pseudo-days.
    /// - Parameter fewAppDays: Whether the days of the day of the week counted with a session of
    ///   the app at any time are rare at the kind's share of such days
    ///   (``fewAppDays(_:of:kindShare:)``; asked only to lower).
    static func weekdayShare(_ c: WeekdayCounts, fewAppDays: () -> Bool) -> (days: Double, observed: Double)? {
        guard c.days >= dayOfWeekMinimumDays else { return nil }
        // A pseudo-day weighs as much as the day of the week's days counted do on average.
        let pseudo = dayOfWeekPseudoDays * c.weightedObserved / Double(c.days)
        let days = c.weightedDays + pseudo * c.kindShare
        let observed = c.weightedObserved + pseudo
        let windowDays = min(c.windowDays, c.days)  // a window can hold two sessions of one day
        if days / observed < c.kindShare {
            return fewAppDays() ? (days, observed) : nil
        }
        guard windowDays >= dayOfWeekMinimumDays,
              lowerTail(c.days - windowDays, of: c.days, p: 1 - c.kindShare) < dayOfWeekRaiseSignificance
        else { return nil }
        return (days, observed)
    }

    /// Whether `days` of the `n` days of a day of the week with a session of an app at any time
    /// is a count the kind's share of such days gives less than once in 1 / ``dayOfWeekSignificance``.
    static func fewAppDays(_ days: Int, of n: Int, kindShare: Double) -> Bool {
        lowerTail(min(days, n), of: n, p: kindShare) < dayOfWeekSignificance
    }

    /// The chance of at most `k` successes in `n` trials of chance `p`; 1 when `k` is not below
    /// the `n·p` expected.
    static func lowerTail(_ k: Int, of n: Int, p: Double) -> Double {
        let q = min(1, max(0, p))
        guard k >= 0, Double(k) < q * Double(n) else { return 1 }
        var c = 1.0, sum = 0.0
        for i in 0...k {
            if i > 0 { c = c * Double(n - i + 1) / Double(i) }
            sum += c * pow(q, Double(i)) * pow(1 - q, Double(n - i))
        }
        return sum
    }

    /// Notes a launch at local time `local`; `isSession` when it starts a session of `app`.
    mutating func launched(at local: Double, app: Int32, isSession: Bool) {
        let day = Self.day(local)
        if days.last.map({ day > $0 }) ?? true {
            days.append(day)
        } else if !days.contains(day) {
            days.insert(day, at: days.firstIndex { $0 > day } ?? days.endIndex)
        }
        if days.count > Self.dayCapacity { days.removeFirst(days.count - Self.dayCapacity) }
        lastLocal = max(lastLocal ?? local, local)
        guard isSession else { return }
        var times = sessions[app] ?? []
        if times.last.map({ local >= $0 }) ?? true {
            times.append(local)
        } else {
            times.insert(local, at: times.firstIndex { $0 > local } ?? times.endIndex)
        }
        if times.count > Self.sessionCapacity { times.removeFirst(times.count - Self.sessionCapacity) }
        sessions[app] = times
    }

    /// Pseudo-days of the other kind of day (weekends for a weekday, weekdays for a weekend day)
    /// in a window's share: a daily habit is expected on its first weekend, a weekday habit
    /// not after a few weekends without it.
    static let otherKindDays = 1.0

    /// The days a window's frequency is counted over for `app`: days of use of each kind before
    /// the window's day, no earlier than the app's oldest session kept (when the log had to let
    /// older ones go), the latest day of use only when the window had passed by its last launch.
    private func countedDays(app: Int32, windowDay: Int32, windowOffset x: Double, tau: Double) -> [Int32] {
        let times = sessions[app] ?? []
        let from = times.count >= Self.sessionCapacity ? Self.day(times[0]) : Int32.min
        let lastDay = lastLocal.map(Self.day)
        return days.filter { d in
            guard d < windowDay, d >= from else { return false }
            if d == lastDay, let lastLocal { return Double(d) * 86_400 + x + tau <= lastLocal }
            return true
        }
    }

    /// Whether the log has a habit of `app` to speak of: its sessions cover at least
    /// `minimumObservedDays` days of use, with at most `maximumDailySessions` sessions a day on
    /// average over them. An app opened more often is used at all hours; its launches are
    /// reacted to, and its gaps say when it comes back.
    func speaks(app: Int32, minimumObservedDays: Int, maximumDailySessions: Double) -> Bool {
        guard let times = sessions[app], !times.isEmpty else { return false }
        let from = times.count >= Self.sessionCapacity ? Self.day(times[0]) : Int32.min
        let covered = days.count(where: { $0 >= from })
        return covered >= minimumObservedDays && Double(times.count) <= maximumDailySessions * Double(covered)
    }

    /// What the log says of `app` in the local window `(start, start + tau]`.
    ///
    /// The share of the window's kind of day is the recency-weighted days of that kind with a
    /// session in it, plus ``otherKindDays`` pseudo-days at the other kind's share, over the days
    /// of its kind counted plus those pseudo-days. Where the window's day of the week differs
    /// from its kind (``weekdayShare(_:fewAppDays:)``), the share is read per day of the week:
    /// the recency-weighted days of that day of the week with a session in the window, plus
    /// ``dayOfWeekPseudoDays`` at the kind's share, over those days counted plus the pseudo-days.
    /// - Parameters:
    ///   - start: The window's start, local time.
    ///   - halfLifeDays: The recency weighting: a day this long before the window counts half.
    /// - Returns: `nil` when no day was observed.
    /// - Complexity: O(``sessionCapacity`` × ``dayCapacity``) at most, on tiny arrays.
    func window(app: Int32, start: Double, tau: Double, halfLifeDays: Double) -> Habit? {
        let windowDay = Self.day(start)
        let x = start - Double(windowDay) * 86_400
        let counted = countedDays(app: app, windowDay: windowDay, windowOffset: x, tau: tau)
        guard !counted.isEmpty else { return nil }
        let weekend = Self.isWeekend(windowDay)
        let weekday = Self.weekday(windowDay)
        func weight(_ d: Int32) -> Double { exp2(-Double(windowDay - d) / halfLifeDays) }
        // Index 0: the window's kind of day; 1: the other; 2: the window's day of the week.
        var observed = [0.0, 0.0, 0.0], hits = [0.0, 0.0, 0.0]
        var observedDays = [0, 0, 0], hitDays = [0, 0, 0]
        for d in counted {
            let k = Self.isWeekend(d) == weekend ? 0 : 1
            observed[k] += weight(d)
            observedDays[k] += 1
            if Self.weekday(d) == weekday {
                observed[2] += weight(d)
                observedDays[2] += 1
            }
        }
        var seen: [Int32] = []
        for s in sessions[app] ?? [] {
            // The day whose window (d·86400 + x, d·86400 + x + tau] could hold s.
            let u = s - x
            let d = Int32((u / 86_400).rounded(.up)) - 1
            guard u - Double(d) * 86_400 <= tau, !seen.contains(d), counted.contains(d) else { continue }
            seen.append(d)
            let k = Self.isWeekend(d) == weekend ? 0 : 1
            hits[k] += weight(d)
            hitDays[k] += 1
            if Self.weekday(d) == weekday {
                hits[2] += weight(d)
                hitDays[2] += 1
            }
        }
        let otherShare = observed[1] > 0 ? hits[1] / observed[1] : nil
        let pseudo = otherShare == nil ? 0 : Self.otherKindDays
        var weightedDays = hits[0] + pseudo * (otherShare ?? 0)
        var weightedObserved = observed[0] + pseudo
        guard weightedObserved > 0 else { return nil }
        let counts = WeekdayCounts(
            kindShare: weightedDays / weightedObserved, weightedDays: hits[2], weightedObserved: observed[2], days: observedDays[2],
            windowDays: hitDays[2])
        let byWeekday = Self.weekdayShare(counts) {
            // The counted days (ascending) with a session of the app at any time (ascending too).
            var kindAppDays = 0, weekdayAppDays = 0
            var i = (sessions[app] ?? []).startIndex
            let times = sessions[app] ?? []
            for d in counted where Self.isWeekend(d) == weekend {
                while i < times.endIndex, Self.day(times[i]) < d { i += 1 }
                guard i < times.endIndex, Self.day(times[i]) == d else { continue }
                kindAppDays += 1
                if Self.weekday(d) == weekday { weekdayAppDays += 1 }
            }
            return Self.fewAppDays(weekdayAppDays, of: observedDays[2], kindShare: Double(kindAppDays) / Double(max(1, observedDays[0])))
        }
        if let byWeekday { (weightedDays, weightedObserved) = byWeekday }
        return Habit(
            share: weightedDays / weightedObserved, weightedDays: weightedDays, weightedObserved: weightedObserved,
            days: hitDays[0], observedDays: observedDays[0], allDays: hitDays[0] + hitDays[1], allObservedDays: counted.count,
            weekend: weekend, weekday: byWeekday == nil ? nil : weekday, weekdayDays: hitDays[2], weekdayObservedDays: observedDays[2],
            start: start, end: start + tau)
    }

    /// Pseudo-sessions spread evenly over the hours a window touches in ``placement(app:start:tau:)``:
    /// 4 of 1, 4 and 16 (log loss of ``HabitLikelihood`` on the archetypes of seed 1: 0.0798,
    /// 0.0776, 0.0770 against 0.0771 without the factor; the `daily-0800` reader: 0.0107, 0.0112,
    /// 0.0126 against 0.0178). With 16 a plan for the 08:00:00 reader still fetched at 08:00 and
    /// 08:30 ("on 0 of the last 22 weekdays", p=0.07).
    static let placementPseudoSessions = 4.0

    /// How much denser than the average of the local hours the window touches `app`'s sessions
    /// are in the window `(start, start + tau]` of the day: the share of its sessions kept (all
    /// days, by time of day) in those hours that fall inside the window, with
    /// ``placementPseudoSessions`` spread evenly over the hours, divided by the window's share of
    /// the hours. The hour-of-week rates and the launch gaps cannot tell 08:00:00 from 08:25;
    /// this factor moves their chance to the part of the hour the app's sessions fill
    /// (``DeviceModel/habitChance(_:at:base:)``): for a reader who opened the app at 08:00:00 on
    /// each of 30 days, 0.12 for (08:00, 08:30] and 3.6 for (07:30, 08:00].
    /// - Parameters:
    ///   - start: The window's start, local time.
    /// - Returns: A positive factor, 1 when no session was kept.
    /// - Complexity: O(``sessionCapacity``).
    func placement(app: Int32, start: Double, tau: Double) -> Double {
        guard let times = sessions[app], !times.isEmpty else { return 1 }
        let x = start - Double(Self.day(start)) * 86_400
        let spanStart = (x / 3600).rounded(.down) * 3600
        let spanLength = ((x + tau) / 3600).rounded(.down) * 3600 + 3600 - spanStart
        var inSpan = 0, inWindow = 0
        for s in times {
            guard Self.offset(s, from: spanStart) < spanLength else { continue }
            inSpan += 1
            let w = Self.offset(s, from: x)
            if w > 0, w <= tau { inWindow += 1 }
        }
        let f = min(1, tau / spanLength)
        return (Double(inWindow) + Self.placementPseudoSessions * f) / (Double(inSpan) + Self.placementPseudoSessions) / f
    }

    /// How long after the time of day `origin` (seconds since local midnight) the local time `s`
    /// falls, on the day of it or the day before: in [0, 86 400).
    @inline(__always)
    static func offset(_ s: Double, from origin: Double) -> Double {
        let o = (s - origin).truncatingRemainder(dividingBy: 86_400)
        return o < 0 ? o + 86_400 : o
    }

    /// How long after the window's start `start` (local time) the earliest of `app`'s kept
    /// session starts in the window `(start, start + tau]` of the day comes, by time of day, on
    /// any day kept; `nil` when none is in it.
    /// - Complexity: O(``sessionCapacity``).
    func earliestSession(app: Int32, start: Double, tau: Double) -> Double? {
        let x = start - Double(Self.day(start)) * 86_400
        var earliest: Double?
        for s in sessions[app] ?? [] {
            let w = Self.offset(s, from: x)
            if w > 0, w <= tau { earliest = min(earliest ?? w, w) }
        }
        return earliest
    }

    /// The start (local time) of the next window of `app` after `after` and before
    /// `before` that its habit fills: on a grid of `step` seconds, the first window whose share
    /// (as ``window(app:start:tau:halfLifeDays:)`` weighs it) reaches `minimumShare`, with
    /// sessions in it on at least `minimumDays` days, or reaches `looseShare` (when given and
    /// lower) with sessions on at least `minimumDays` of the days its share was read from (its
    /// day of the week's, or its kind's: what the shrinkage of a day of the week to its kind, or
    /// of a kind to the other, lends is no habit of these days); none when the log has no habit
    /// to speak of (``speaks(app:minimumObservedDays:maximumDailySessions:)``). The window found
    /// is moved to the fullest window of the τ that
    /// follows it (the earliest of equals), so that the fetch it leads to lands within τ before
    /// the most sessions the habit holds.
    ///
    /// Shares are counted here over every day of use (the exact count at a look,
    /// ``window(app:start:tau:halfLifeDays:)``, leaves out the window's own day and the days
    /// after it): where to look, not what it is worth.
    /// - Complexity: O(``sessionCapacity`` log ``sessionCapacity`` + the grid's windows).
    func nextWindow(
        app: Int32, after: Double, before: Double, tau: Double, halfLifeDays: Double, minimumShare: Double, minimumDays: Int,
        minimumObservedDays: Int = 0, maximumDailySessions: Double = .infinity, looseShare: Double? = nil, step: Double = 300
    ) -> Double? {
        guard let times = sessions[app], times.count >= minimumDays, before > after, !days.isEmpty,
              speaks(app: app, minimumObservedDays: minimumObservedDays, maximumDailySessions: maximumDailySessions)
        else { return nil }
        let from = times.count >= Self.sessionCapacity ? Self.day(times[0]) : Int32.min
        let reference = Double(days.last!)
        func weight(_ d: Int32) -> Double { exp2(-(reference - Double(d)) / halfLifeDays) }
        // Per kind of day (0 weekday, 1 weekend), then (indices 2 + 0 … 2 + 6) per day of the
        // week, Monday first: the sessions by time of day (those after midnight also as the late
        // end of the day before), and the days counted.
        func entries(_ i: Int) -> [(offset: Double, weight: Double)] {
            func index(_ d: Int32) -> Int { i < 2 ? (Self.isWeekend(d) ? 1 : 0) : 2 + Self.weekday(d) }
            var result: [(offset: Double, weight: Double)] = []
            for s in times {
                let d = Self.day(s)
                guard d >= from else { continue }
                let offset = s - Double(d) * 86_400
                if index(d) == i { result.append((offset, weight(d))) }
                if index(d - 1) == i { result.append((offset + 86_400, weight(d))) }
            }
            return result.sorted { $0.offset < $1.offset }
        }
        var observed = [Double](repeating: 0, count: 9)
        var observedDays = [Int](repeating: 0, count: 9)
        var appDays = [Int](repeating: 0, count: 9)
        var next = times.startIndex  // the sessions' days ascend as the days do
        for d in days where d >= from {
            while next < times.endIndex, Self.day(times[next]) < d { next += 1 }
            let used = next < times.endIndex && Self.day(times[next]) == d
            let kind = Self.isWeekend(d) ? 1 : 0, weekday = 2 + Self.weekday(d)
            observed[kind] += weight(d)
            observedDays[kind] += 1
            observed[weekday] += weight(d)
            observedDays[weekday] += 1
            if used {
                appDays[kind] += 1
                appDays[weekday] += 1
            }
        }
        let slots = Int((86_400 / step).rounded(.up))
        // sums[i][j], counts[i][j]: sessions in the window (j·step, j·step + tau] of the days of
        // kind i (0 weekday, 1 weekend), or of day of the week i − 2; a day of the week's only
        // when it has the days to speak (``dayOfWeekMinimumDays``), and once the search reaches it.
        var sums = [[Double]](repeating: [], count: 9)
        var counts = [[Int]](repeating: [], count: 9)
        func slide(_ i: Int) {
            guard sums[i].isEmpty else { return }
            sums[i] = [Double](repeating: 0, count: slots)
            counts[i] = [Int](repeating: 0, count: slots)
            let sorted = entries(i)
            var lo = 0, hi = 0, sum = 0.0
            for j in 0..<slots {
                let x = Double(j) * step
                while hi < sorted.count, sorted[hi].offset <= x + tau { sum += sorted[hi].weight; hi += 1 }
                while lo < hi, sorted[lo].offset <= x { sum -= sorted[lo].weight; lo += 1 }
                sums[i][j] = sum
                counts[i][j] = hi - lo
            }
        }
        slide(0)
        slide(1)
        var fewAppDays = [Bool?](repeating: nil, count: 9)  // per day of the week, once
        // The share of the window, and which days it was read from (the kind's index or the
        // day of the week's).
        func share(_ kind: Int, _ weekday: Int, _ j: Int) -> (share: Double, days: Int) {
            let other = 1 - kind
            let pseudo = observed[other] > 0 ? Self.otherKindDays : 0
            let otherShare = observed[other] > 0 ? sums[other][j] / observed[other] : 0
            let denominator = observed[kind] + pseudo
            let kindShare = denominator > 0 ? (sums[kind][j] + pseudo * otherShare) / denominator : 0
            let w = 2 + weekday
            guard observedDays[w] >= Self.dayOfWeekMinimumDays else { return (kindShare, kind) }
            slide(w)
            let byWeekday = Self.weekdayShare(WeekdayCounts(
                kindShare: kindShare, weightedDays: sums[w][j], weightedObserved: observed[w], days: observedDays[w],
                windowDays: counts[w][j])) {
                if let known = fewAppDays[w] { return known }
                let kindAppDayShare = Double(appDays[kind]) / Double(max(1, observedDays[kind]))
                let few = Self.fewAppDays(appDays[w], of: observedDays[w], kindShare: kindAppDayShare)
                fewAppDays[w] = few
                return few
            }
            return byWeekday.map { ($0.days / $0.observed, w) } ?? (kindShare, kind)
        }
        var t = ((after / step).rounded(.down) + 1) * step  // strictly after: a look comes after what it follows
        var first: Double?
        var found: Double?
        var best = 0.0
        while t < before {
            let d = Self.day(t)
            let kind = Self.isWeekend(d) ? 1 : 0
            let j = min(slots - 1, Int(((t - Double(d) * 86_400) / step).rounded(.down)))
            let (s, counted) = share(kind, Self.weekday(d), j)
            if let first {
                // The fullest window within τ of the first that qualifies (the earliest of equals).
                if t > first + tau { break }
                if s > best { (found, best) = (t, s) }
            } else if s >= minimumShare ? counts[0][j] + counts[1][j] >= minimumDays
                        : looseShare.map({ s >= $0 && counts[counted][j] >= minimumDays }) ?? false {
                (first, found, best) = (t, t, s)
            }
            t += step
        }
        return found
    }
}

/// What a device's history says of one app in one window of the day: on how many recent days of
/// the same kind, and of the same day of the week, a session started in it.
struct Habit: Sendable, Hashable {
    /// The recency-weighted share of the counted days with a session in the window.
    var share: Double
    /// The recency-weighted days with a session in the window, and the days counted.
    var weightedDays: Double
    var weightedObserved: Double
    /// Days of the window's kind with a session in the window, and days of that kind counted
    /// (unweighted, as a person counts).
    var days: Int
    var observedDays: Int
    /// Days of either kind with a session in the window, and days of either kind counted.
    var allDays: Int
    var allObservedDays: Int
    /// Whether the window's kind of day is the weekend (else weekdays).
    var weekend: Bool
    /// The window's day of the week (0 = Monday … 6 = Sunday) when the share was read per day of
    /// the week (``HabitLog/window(app:start:tau:halfLifeDays:)``), else `nil`.
    var weekday: Int?
    /// Days of the window's day of the week with a session in the window, and days of it counted
    /// (unweighted), whether or not the share was read per day of the week.
    var weekdayDays: Int
    var weekdayObservedDays: Int
    /// The window, local time.
    var start: Double
    var end: Double
}
