import FetchCastModel
import FetchCastTrace
import Testing

struct FetchPlannerTests {
    func learnedModel(seed: UInt64) -> DeviceModel {
        var model = DeviceModel()
        for e in habitTrace(seed: seed) { model.observe(e) }
        return model
    }

    @Test(arguments: [1 as UInt64, 2, 3])
    func keepsBudgetSpacingAndNotBefore(seed: UInt64) {
        let model = learnedModel(seed: seed)
        let start = model.lastEventTime! + 3600
        var configuration = SchedulerConfiguration(budget: 5)
        configuration.notBefore = start + 7200
        let plan = FetchPlanner.plan(model: model, apps: [0, 1, 2, 3, 4, 5], from: start, horizon: 3 * 86_400,
                                     configuration: configuration, prior: .none)
        #expect(!plan.isEmpty)
        #expect(plan.allSatisfy { $0.time >= start + 7200 })
        #expect(plan.allSatisfy { (0...1).contains($0.launchProbability) && (0...1).contains($0.newDataProbability) })
        var perDay: [Int: Int] = [:]
        for f in plan { perDay[LocalTime.day(time: f.time, utcOffsetSeconds: model.lastOffset), default: 0] += 1 }
        #expect(perDay.values.allSatisfy { $0 <= 5 })
        #expect(zip(plan, plan.dropFirst()).allSatisfy { $0.time <= $1.time }, "in time order")
        for app in Int32(0)..<6 {
            let times = plan.filter { $0.app == app }.map(\.time)
            #expect(zip(times, times.dropFirst()).allSatisfy { $1 - $0 >= 900 })
        }
    }

    static let habitStart = 1_700_006_400.0

    /// Three weeks of app 1 opened every day at 09:02 UTC and app 2 at 20:00.
    static func nineAndEightPM() -> DeviceModel {
        var model = DeviceModel()
        for day in 0..<21 {
            let d = habitStart + Double(day) * 86_400
            model.observe(DeviceEvent(time: d + 9 * 3600 + 120, app: 1, kind: .launch))
            model.observe(DeviceEvent(time: d + 20 * 3600, app: 2, kind: .launch))
        }
        return model
    }

    @Test func plansAheadOfTheHabitualHour() {
        // App 1 opened every day at 09:00 UTC (app 2 in the evening): the plan for tomorrow fetches it
        // shortly before or at 09:00.
        let start = Self.habitStart
        let model = Self.nineAndEightPM()
        let from = start + 21 * 86_400
        let plan = FetchPlanner.plan(model: model, apps: [1], from: from, configuration: SchedulerConfiguration(budget: 1), prior: .none)
        #expect(plan.count == 1)
        let hour = (plan[0].time - from) / 3600
        #expect(hour > 8 && hour <= 9.05, "planned at \(hour) h")
    }

    @Test func skipsTheHabitualHourOfAnAppSilentForDays() {
        // App 1 opened every day at 09:00 UTC for three weeks, then not for four days while
        // app 2 goes on every evening: the hour-of-week rates still peak at 09:00, but an app
        // silent for days is not expected there. Planned from right after its last launch the
        // same history gives a 09:00 fetch; four days later it gives none.
        let start = Self.habitStart
        var model = Self.nineAndEightPM()
        let configuration = SchedulerConfiguration(budget: 1)
        let fresh = FetchPlanner.plan(model: model, apps: [1], from: start + 21 * 86_400, configuration: configuration, prior: .none)
        #expect(fresh.count == 1, "the habit, a day after its last launch")
        for day in 21..<25 {
            model.observe(DeviceEvent(time: start + Double(day) * 86_400 + 20 * 3600, app: 2, kind: .launch))
        }
        let silent = FetchPlanner.plan(model: model, apps: [1], from: start + 25 * 86_400, configuration: configuration, prior: .none)
        #expect(silent.isEmpty, "planned \(silent.map(\.launchProbability)) after four silent days")
    }

    @Test func newDataChancesEqualTheModelsAndSkipQuietNights() {
        // App 9 is opened at noon and its content is published every 10 minutes from 07:00
        // to 23:00 UTC: every planned fetch carries the model's own P(new data) since the
        // previous refresh (real or planned), and no fetch is planned in the quiet night.
        var model = DeviceModel()
        let midnight = 1_700_006_400.0
        for day in 0..<21 {
            let d = midnight + Double(day) * 86_400
            model.observe(DeviceEvent(time: d + 12 * 3600, app: 9, kind: .launch))
            for minute in stride(from: 7 * 60, to: 23 * 60, by: 10) {
                model.observe(DeviceEvent(time: d + Double(minute) * 60, app: 9, kind: .publish))
            }
        }
        let from = model.lastEventTime! + 60
        let plan = FetchPlanner.plan(model: model, apps: [9], from: from, horizon: 2 * 86_400,
                                     configuration: SchedulerConfiguration(budget: 24), prior: .none)
        #expect(!plan.isEmpty)
        var refreshed = model.lastRefresh(of: 9) ?? from
        for f in plan {
            // Each planned fetch refreshes the cache for the next one.
            let expected = model.newDataProbability(app: 9, at: f.time, since: refreshed, now: from)
            refreshed = f.time
            #expect(abs(f.newDataProbability - expected) < 1e-9, "at \(f.time): \(f.newDataProbability) vs \(expected)")
            let hour = Int((f.time - midnight).truncatingRemainder(dividingBy: 86_400) / 3600)
            #expect(!(1...5).contains(hour), "fetch at \(hour):00 in the quiet night")
        }
    }

    @Test func planningFromInsideTheHistoryIgnoresLaterRefreshes() {
        // App 1 opened every day at 09:00 for three weeks; a plan from the start of week two
        // (before the model's last event) still fetches it before 09:00 that day instead of
        // treating the last launch, weeks later, as a fresh cache.
        var model = DeviceModel()
        let start = 1_700_006_400.0
        for day in 0..<21 {
            model.observe(DeviceEvent(time: start + Double(day) * 86_400 + 9 * 3600 + 120, app: 1, kind: .launch))
        }
        let from = start + 7 * 86_400
        let plan = FetchPlanner.plan(model: model, apps: [1], from: from, configuration: SchedulerConfiguration(budget: 1), prior: .none)
        #expect(plan.count == 1)
        let hour = (plan.first.map { $0.time - from } ?? -1) / 3600
        #expect(hour > 8 && hour <= 9.05, "planned at \(hour) h")
    }
}


/// Plans with the device's conditions: each moment under the conditions it will most likely meet.
struct FetchPlannerConditionTests {
    static let cellular = DeviceConditions(network: .cellular, power: .battery)

    /// What a plan from `start` knows when the device was on Wi-Fi from 12:00 to 24:00 local and
    /// on cellular otherwise, every day of the model's history, and is on cellular now.
    static func afternoonsOnWiFi(model: DeviceModel, start: Double) -> PlanConditions {
        var habits = ConditionHabits()
        let offset = Double(model.lastOffset)
        var day = ((start - 21 * 86_400 + offset) / 86_400).rounded(.down) * 86_400 - offset
        while day + 86_400 <= start {
            habits.observe(cellular, at: day, utcOffsetSeconds: model.lastOffset)
            habits.observe(DeviceConditions(network: .wifi, power: .battery), at: day + 12 * 3600, utcOffsetSeconds: model.lastOffset)
            day += 86_400
        }
        habits.observe(cellular, at: day, utcOffsetSeconds: model.lastOffset)
        return PlanConditions(current: cellular, habits: habits.through(start))
    }

    @Test(arguments: [1 as UInt64, 2, 3])
    func anUnmeteredConstraintPlansOnlyTheUsualWiFiHours(seed: UInt64) {
        var model = DeviceModel()
        for e in habitTrace(seed: seed) { model.observe(e) }
        let start = model.lastEventTime! + 60
        let known = Self.afternoonsOnWiFi(model: model, start: start)
        var asked: [(Int32, Double, DeviceConditions)] = []
        let plan = FetchPlanner.plan(
            model: model, apps: [0, 1, 2, 3, 4, 5], from: start, configuration: SchedulerConfiguration(budget: 24), prior: .none,
            conditions: known, admits: { app, t, c in asked.append((app, t, c)); return c.isUnmetered })
        #expect(!plan.isEmpty)
        // On cellular now: nothing within τ; after it, only at the usual Wi-Fi hours, each
        // planned fetch saying so (or riding the wakeup of one that does).
        #expect(asked.contains { $0.1 - start < 1800 && $0.2.network == .cellular })
        for f in plan {
            #expect(f.time - start >= 1800)
            #expect(LocalTime.hourOfDay(time: f.time, utcOffsetSeconds: model.lastOffset) >= 12)
            switch (f.habit, f.reason) {
            case (.wifi(let share, let hour)?, _):
                #expect(share >= 0.5 && hour == LocalTime.hourOfDay(time: f.time, utcOffsetSeconds: model.lastOffset))
            case (nil, .coalesced): break
            default: Issue.record("\(f) does not say it counts on Wi-Fi")
            }
        }
    }

    @Test(arguments: [1 as UInt64, 2, 3])
    func aPlanTakesLesserMomentsOnWiFiThanOnCellular(seed: UInt64) {
        var model = DeviceModel()
        for e in habitTrace(seed: seed) { model.observe(e) }
        let start = model.lastEventTime! + 60
        let configuration = SchedulerConfiguration(budget: 24)
        func plan(_ network: NetworkCondition) -> [ScheduledFetch] {
            var habits = ConditionHabits()
            habits.observe(DeviceConditions(network: network, power: .battery), at: start - 14 * 86_400, utcOffsetSeconds: model.lastOffset)
            for day in 1...14 {
                habits.observe(DeviceConditions(network: network, power: .battery), at: start - 14 * 86_400 + Double(day) * 86_400 - 3600,
                               utcOffsetSeconds: model.lastOffset)
            }
            let known = PlanConditions(current: DeviceConditions(network: network, power: .battery), habits: habits.through(start))
            return FetchPlanner.plan(model: model, apps: [0, 1, 2, 3, 4, 5], from: start, configuration: configuration, prior: .none,
                                     conditions: known)
        }
        let blind = FetchPlanner.plan(model: model, apps: [0, 1, 2, 3, 4, 5], from: start, configuration: configuration, prior: .none)
        let wifi = plan(.wifi), cellular = plan(.cellular)
        #expect(cellular.count <= blind.count && blind.count <= wifi.count)
        #expect(cellular.count < wifi.count, "\(cellular.count) fetches planned on cellular, \(wifi.count) on Wi-Fi")
        let lead = { (f: ScheduledFetch) -> Bool in if case .coalesced = f.reason { false } else { true } }
        // A lead fetch below the plan's minimum value only on Wi-Fi (at least 0.8 × 0.8 of it).
        #expect(wifi.contains { lead($0) && $0.launchProbability * $0.newDataProbability < configuration.planMinimumValue })
        #expect(wifi.filter(lead).allSatisfy { $0.launchProbability * $0.newDataProbability >= 0.64 * configuration.planMinimumValue - 1e-12 })
        #expect(cellular.filter(lead).allSatisfy { $0.launchProbability * $0.newDataProbability >= 1.15 * configuration.planMinimumValue - 1e-12 })
    }
}
