import FetchCastCore
import FetchCastModel
import FetchCastTrace
import Testing
import FetchCastTestSupport

/// Hand-made habits where the right answer is obvious: the scheduler looks ahead of them.
struct AnticipationTests {
    /// Monday 2024-03-04 00:00 local (UTC+1), as Unix seconds.
    static let monday = 1_709_506_800.0
    static let offset: Int32 = 3600
    static let news: Int32 = 0, chat: Int32 = 1

    /// A launch at local `hour` of day `day` (0 = Monday 2024-03-04).
    static func launch(_ app: Int32, day: Int, hour: Double) -> DeviceEvent {
        DeviceEvent(time: monday + Double(day) * 86_400 + hour * 3600, utcOffsetSeconds: offset, app: app, kind: .launch)
    }

    /// The issue's simplest user: `news` at 08:00 every day, `chat` at 12:30 and 21:10.
    static func dailyReader(days: Range<Int>, newsDays: (Int) -> Bool = { _ in true }) -> [DeviceEvent] {
        days.flatMap { d in
            (newsDays(d) ? [launch(news, day: d, hour: 8)] : []) + [launch(chat, day: d, hour: 12.5), launch(chat, day: d, hour: 21 + 10.0 / 60)]
        }
    }

    static func follower(_ events: [DeviceEvent], budget: Double = 24) -> LearnedPolicy {
        var policy = LearnedPolicy(
            apps: [news, chat], model: DeviceModel(), configuration: SchedulerConfiguration(budget: budget), prior: .none, mode: .following)
        for e in events { policy.observe(e) }
        return policy
    }

    /// Local hour of day of a Unix time.
    static func localHour(_ t: Double) -> Double {
        (t - LocalTime.startOfDay(LocalTime.day(time: t, utcOffsetSeconds: offset), utcOffsetSeconds: offset)) / 3600
    }

    @Test func aDailyHabitIsPlannedAtThreeInTheMorningForTheHalfHourBeforeIt() {
        // Four weeks of the habit; asked at 03:00 of the next day, long after the last event (21:10).
        let events = Self.dailyReader(days: 0..<28)
        let policy = Self.follower(events)
        let at = Self.monday + 28 * 86_400 + 3 * 3600
        let plan = policy.plan(from: at)
        // One: in the half hour before 08:00. The user was never late in four weeks, so the plan
        // does not go on looking at 08:00 and 08:30 as the cache goes stale (it did while the
        // hours' chance, which cannot tell 08:00:00 from 08:25, lent those half hours p≈0.2).
        let newsFetches = plan.filter { $0.app == Self.news && $0.time < at + 12 * 3600 }
        #expect(newsFetches.count == 1, "\(newsFetches.map { (Self.localHour($0.time), $0.launchProbability) })")
        if let f = newsFetches.first {
            #expect(Self.localHour(f.time) >= 7.5 && Self.localHour(f.time) < 8, "fetch at \(Self.localHour(f.time))")
            guard case .habit = f.reason else { Issue.record("reason \(f.reason)"); return }
        }
        // The same for chat's 12:30 and 21:10.
        let chatFetches = plan.filter { $0.app == Self.chat && $0.time < at + 24 * 3600 }.map { Self.localHour($0.time) }
        #expect(chatFetches.count == 2 && chatFetches.allSatisfy { (12..<12.5).contains($0) || ((21 - 1.0 / 3)..<(21 + 1.0 / 6)).contains($0) },
                "\(chatFetches)")
    }

    @Test func theLiveSchedulerMakesTheDailyHabitFresh() {
        // Replayed live: from the second week on, every 08:00 launch has a fetch in the 30 min before it.
        let events = Self.dailyReader(days: 0..<28)
        var policy = LearnedPolicy(apps: [Self.news, Self.chat], model: DeviceModel(), configuration: SchedulerConfiguration(budget: 6), prior: .none)
        let made = drive(&policy, events: events, until: events.last!.time)
        let habit = events.filter { $0.app == Self.news && $0.time >= Self.monday + 7 * 86_400 }
        let fresh = habit.filter { l in made.contains { $0.app == Self.news && $0.time < l.time && l.time - $0.time <= 1800 } }
        #expect(habit.count == 21)
        #expect(fresh.count == habit.count, "\(fresh.count) of \(habit.count) made fresh; missed: \(habit.filter { l in !fresh.contains(l) }.map { ($0.time - Self.monday) / 86_400 }); news fetches: \(made.filter { $0.app == Self.news }.map { (($0.time - Self.monday) / 86_400 * 100).rounded() / 100 })")
    }

    @Test func aWeekdayHabitIsNotFetchedOnSaturday() {
        // news at 08:00 on weekdays only, for four weeks; chat every day.
        let events = Self.dailyReader(days: 0..<26) { d in d % 7 < 5 }
        let policy = Self.follower(events)
        // Asked on Saturday (day 26 is a Saturday) at 03:00: nothing for news that day.
        let saturday = Self.monday + 26 * 86_400
        let plan = policy.plan(from: saturday + 3 * 3600, horizon: 20 * 3600)
        #expect(!plan.contains { $0.app == Self.news }, "\(plan.map { ($0.app, Self.localHour($0.time)) })")
        // And on the Monday after, it is planned again.
        let monday = Self.monday + 28 * 86_400
        let mondayPlan = policy.plan(from: monday + 3 * 3600, horizon: 12 * 3600)
        #expect(mondayPlan.contains { $0.app == Self.news && Self.localHour($0.time) >= 7.5 && Self.localHour($0.time) < 8 })
    }

    /// The documented number of days (docs/model.md, "Anticipation") after which a stopped habit
    /// is no longer fetched for while the device is used for other apps.
    static let stoppedHabitDays = 3

    @Test func aHabitThatStopsIsNoLongerFetched() {
        // Four weeks of news at 08:00, then none; chat goes on.
        let stop = 28
        let events = Self.dailyReader(days: 0..<(stop + 14)) { d in d < stop }
        for day in (stop + Self.stoppedHabitDays)..<(stop + 14) {
            let history = events.filter { $0.time < Self.monday + Double(day) * 86_400 }
            let plan = Self.follower(history).plan(from: Self.monday + Double(day) * 86_400 + 3 * 3600, horizon: 12 * 3600)
            #expect(!plan.contains { $0.app == Self.news }, "day \(day - stop) after the habit stopped: \(plan.map { Self.localHour($0.time) })")
        }
        // While the day after it stopped still plans it (the habit was there).
        let dayAfter = events.filter { $0.time < Self.monday + Double(stop) * 86_400 }
        #expect(Self.follower(dayAfter).plan(from: Self.monday + Double(stop) * 86_400 + 3 * 3600, horizon: 12 * 3600).contains { $0.app == Self.news })
    }

    @Test func aSingleSessionInAMonthPlansNothing() {
        // chat every day at 12:30 and 21:10 for a month; news once, on day 3 at 08:00.
        let events = Self.dailyReader(days: 0..<30) { d in d == 3 }
        let policy = Self.follower(events)
        for day in 30..<33 {
            let plan = policy.plan(from: Self.monday + Double(day) * 86_400 + 3 * 3600, horizon: 12 * 3600)
            #expect(!plan.contains { $0.app == Self.news }, "\(plan.map { ($0.app, Self.localHour($0.time)) })")
        }
    }

    @Test func withoutAnticipationNothingIsPlannedBetweenSessions() {
        // The reactive scheduler alone (what the issue found): asked at 03:00, an empty plan.
        let events = Self.dailyReader(days: 0..<28)
        var configuration = SchedulerConfiguration(budget: 24)
        configuration.anticipates = false
        var policy = LearnedPolicy(apps: [Self.news, Self.chat], model: DeviceModel(), configuration: configuration, prior: .none, mode: .following)
        for e in events { policy.observe(e) }
        #expect(policy.plan(from: Self.monday + 28 * 86_400 + 3 * 3600).isEmpty)
    }

    static let wifi = DeviceConditions(network: .wifi, power: .battery)
    static let cellular = DeviceConditions(network: .cellular, power: .battery)
    static let cellularCharging = DeviceConditions(network: .cellular, power: .charging)

    /// Four weeks of the daily reader on a timeline of conditions: `initial` from an hour before
    /// the first day, then each day the `daily` changes (local hour, conditions). Replays the
    /// live policy (state rows first at an instant, then the looks at it, then its launches);
    /// returns the fetches made, each with the conditions it was made under.
    static func replay(
        initial: DeviceConditions, daily: [(hour: Double, conditions: DeviceConditions)], constraints: SchedulerConstraints? = nil
    ) -> [(fetch: MadeFetch, under: DeviceConditions)] {
        var configuration = SchedulerConfiguration(budget: 6)
        configuration.constraints = constraints
        var policy = LearnedPolicy(apps: [news, chat], model: DeviceModel(), configuration: configuration, prior: .none)
        var timeline: [(time: Double, conditions: DeviceConditions?, launch: DeviceEvent?)] = [(monday - 3600, initial, nil)]
        for day in 0..<28 {
            let d = monday + Double(day) * 86_400
            for change in daily { timeline.append((d + change.hour * 3600, change.conditions, nil)) }
        }
        for e in dailyReader(days: 0..<28) { timeline.append((e.time, nil, e)) }
        timeline.sort { ($0.time, $0.launch == nil ? 0 : 1) < ($1.time, $1.launch == nil ? 0 : 1) }
        var made: [(fetch: MadeFetch, under: DeviceConditions)] = []
        var now = initial
        var planned: [PlannedFetch] = []
        func wake(through end: Double, inclusive: Bool) {
            while let w = policy.nextWakeup, inclusive ? w <= end : w < end {
                planned.removeAll()
                policy.wake(at: w, into: &planned)
                for p in planned {
                    made.append((MadeFetch(app: p.app, time: w), now))
                    policy.didFetch(app: p.app, at: w, result: .newData)
                }
            }
        }
        for item in timeline {
            if let c = item.conditions {
                wake(through: item.time, inclusive: false)
                now = c
                policy.observeConditions(c, at: item.time, utcOffsetSeconds: offset)
            }
            if let e = item.launch {
                wake(through: e.time, inclusive: true)
                policy.observe(e)
            }
        }
        return made
    }

    /// The daily reader with news and chat `unmetered`, on battery: on Wi-Fi until the first
    /// day, then each day on cellular from `cellularFrom` and on Wi-Fi from `wifiFrom` (local
    /// hours). Expects no fetch off Wi-Fi; returns the fetches made.
    static func unmeteredReader(cellularFrom: Double, wifiFrom: Double) -> [MadeFetch] {
        let unmetered = AppConstraints(network: .unmetered)
        let made = replay(
            initial: wifi, daily: [(cellularFrom, cellular), (wifiFrom, wifi)],
            constraints: SchedulerConstraints(apps: [news: unmetered, chat: unmetered]))
        for m in made where m.under.network != .wifi {
            Issue.record("a fetch the constraints refuse at \(localHour(m.fetch.time))")
        }
        return made.map(\.fetch)
    }

    /// The 08:00 news launches from the second week on that a fetch within the 30 min before
    /// made fresh, the fetch at a local hour in `hours`.
    static func freshNews(_ made: [MadeFetch], fetchedIn hours: Range<Double>) -> (fresh: Int, of: Int) {
        let habit = dailyReader(days: 7..<28).filter { $0.app == news }
        let fresh = habit.filter { l in
            made.contains { $0.app == news && $0.time < l.time && l.time - $0.time <= 1800 && hours.contains(localHour($0.time)) }
        }
        return (fresh.count, habit.count)
    }

    @Test func aReaderWhoLeavesHomeWiFiAt0745IsFetchedOnWiFi() {
        // Home Wi-Fi until 07:45, cellular until 18:00: fetched on Wi-Fi before 07:45.
        let r = Self.freshNews(Self.unmeteredReader(cellularFrom: 7.75, wifiFrom: 18), fetchedIn: 0..<7.75)
        #expect(r.of == 21)
        #expect(r.fresh >= 18, "\(r.fresh) of \(r.of) fetched on Wi-Fi before 08:00")
    }

    @Test func aLookTheConstraintsRefuseWaitsForWiFiInsideTheWindow() {
        // Cellular from 07:00 (the look at 07:30 is refused), Wi-Fi from 07:50 (a café): fetched
        // at 07:50, still inside the half hour before 08:00.
        let r = Self.freshNews(Self.unmeteredReader(cellularFrom: 7, wifiFrom: 7 + 50.0 / 60), fetchedIn: (7 + 50.0 / 60)..<8)
        #expect(r.fresh >= 18, "\(r.fresh) of \(r.of) fetched on Wi-Fi from 07:50")
    }

    @Test func aLookAheadOnCellularWaitsForTheChargerInsideTheWindow() {
        // On cellular on battery all day but for a charger from 07:45 to 09:00: the look at 07:30
        // waits, and the charger is the look (the battery pays nothing for the fetch).
        let made = Self.replay(initial: Self.cellular, daily: [(7.75, Self.cellularCharging), (9, Self.cellular)])
        let r = Self.freshNews(made.map(\.fetch), fetchedIn: 7.75..<8)
        #expect(r.fresh >= 18, "\(r.fresh) of \(r.of) fetched on the charger from 07:45")
        let onBattery = made.filter { $0.fetch.app == Self.news && !$0.under.isCharging && (7.5..<8).contains(Self.localHour($0.fetch.time)) }
        #expect(onBattery.count <= 3, "\(onBattery.map { Self.localHour($0.fetch.time) })")
    }

    @Test func aLookAheadOnCellularWithNothingCheaperComesAtTheLastMomentOfEqualValue() {
        // On cellular on battery all day: the look at 07:30 waits until 07:55, 5 min before the
        // earliest 08:00 its history holds, and the launch is still fresh.
        let made = Self.replay(initial: Self.cellular, daily: [])
        let r = Self.freshNews(made.map(\.fetch), fetchedIn: (7 + 55.0 / 60)..<8)
        #expect(r.fresh >= 18, "\(r.fresh) of \(r.of) fetched at 07:55")
    }

    @Test func aLookAheadOnWiFiOnBatteryIsNotDeferredPastTheDeviceLeavingWiFi() {
        // On Wi-Fi on battery until 07:45, then cellular: no constraints, yet the look ahead is
        // not deferred (the device may leave Wi-Fi, as it does here), so news is fetched on Wi-Fi.
        let made = Self.replay(initial: Self.wifi, daily: [(7.75, Self.cellular), (18, Self.wifi)])
        let r = Self.freshNews(made.map(\.fetch), fetchedIn: 7.5..<7.75)
        #expect(r.fresh >= 18, "\(r.fresh) of \(r.of) fetched on Wi-Fi before 07:45")
    }

    @Test func aSavedSchedulerKeepsItsDeferredLook() throws {
        // Asked at 07:40 of a day on cellular, the plan's news fetch is the deferred look at 07:55;
        // restored from its saved state, the scheduler plans the same.
        var policy = Self.follower(Self.dailyReader(days: 0..<14))
        policy.observeConditions(Self.cellular, at: Self.monday + 14 * 86_400 + 3 * 3600, utcOffsetSeconds: Self.offset)
        let at = Self.monday + 14 * 86_400 + (7 + 40.0 / 60) * 3600
        policy.advance(through: at)
        let restored = try LearnedPolicy(restoring: try policy.savedState())
        let plan = policy.plan(from: at, horizon: 3600)
        #expect(restored.plan(from: at, horizon: 3600) == plan)
        #expect(plan.filter { $0.app == Self.news && Self.localHour($0.time) < 8 }.map { Self.localHour($0.time) } == [7 + 55.0 / 60], "\(plan)")
    }

    @Test func aSavedSchedulerKeepsItsLooksAhead() throws {
        let policy = Self.follower(Self.dailyReader(days: 0..<14))
        let restored = try LearnedPolicy(restoring: try policy.savedState())
        let at = Self.monday + 14 * 86_400 + 3 * 3600
        #expect(restored.plan(from: at) == policy.plan(from: at))
        #expect(!policy.plan(from: at).isEmpty)
    }
}
