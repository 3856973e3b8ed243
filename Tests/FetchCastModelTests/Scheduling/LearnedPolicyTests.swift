import FetchCastCore
import FetchCastModel
import FetchCastTrace
import Testing
import FetchCastTestSupport

struct LearnedPolicyTests {
    @Test(arguments: [(11 as UInt64, 24.0), (12, 12), (13, 3), (14, 24.9), (15, 1)])
    func neverExceedsTheDailyCapOrTheMinimumInterval(seed: UInt64, budget: Double) {
        let events = habitTrace(seed: seed)
        var configuration = SchedulerConfiguration(budget: budget)
        configuration.minimumInterval = 900
        var policy = LearnedPolicy(apps: [0, 1, 2, 3, 4, 5], model: DeviceModel(), configuration: configuration, prior: .none)
        let made = drive(&policy, events: events, until: events.last!.time + 86_400)
        #expect(!made.isEmpty || budget < 1)
        var perDay: [Int: Int] = [:]
        for f in made { perDay[LocalTime.day(time: f.time, utcOffsetSeconds: 3600), default: 0] += 1 }
        #expect(perDay.values.allSatisfy { $0 <= Int(budget) }, "\(perDay)")
        var last: [Int32: Double] = [:]
        for f in made {
            if let l = last[f.app] { #expect(f.time - l >= 900) }
            last[f.app] = f.time
        }
    }

    @Test func fetchesOnlyItsOwnAppsAndAfterTheLaunchItReactsTo() {
        let events = habitTrace(seed: 21)
        var policy = LearnedPolicy(apps: [1, 2], model: DeviceModel(), configuration: SchedulerConfiguration(budget: 24), prior: .none)
        let made = drive(&policy, events: events, until: events.last!.time)
        #expect(made.allSatisfy { $0.app == 1 || $0.app == 2 })
        #expect(made.allSatisfy { $0.time > events.first!.time }, "no fetch before anything was observed")
    }

    @Test func respectsNotBefore() {
        let events = habitTrace(seed: 22)
        var configuration = SchedulerConfiguration(budget: 24)
        let notBefore = events[events.count / 2].time
        configuration.notBefore = notBefore
        var policy = LearnedPolicy(apps: [0, 1, 2, 3], model: DeviceModel(), configuration: configuration, prior: .none)
        let made = drive(&policy, events: events, until: events.last!.time)
        #expect(!made.isEmpty)
        #expect(made.allSatisfy { $0.time >= notBefore })
    }

    @Test func noNightFetchesWhenContentNeverChangesAtNight() {
        // A news app whose content is published only 07:00–23:00; the user reads it every
        // evening at 23:30 (after the last story) and opens apps at random hours, night included.
        let start = 1_700_006_400.0  // 2023-11-15T00:00:00Z
        var events: [DeviceEvent] = []
        var rng = SeededGenerator(seed: 5)
        for day in 0..<28 {
            let d = start + Double(day) * 86_400
            for minute in stride(from: 7 * 60, to: 23 * 60, by: 15) {
                events.append(DeviceEvent(time: d + Double(minute) * 60, app: 1, kind: .publish))
            }
            events.append(DeviceEvent(time: d + 23.5 * 3600, app: 1, kind: .launch))
            for _ in 0..<16 {
                let t = d + Double(Int.random(in: 0..<86_400, using: &rng))
                events.append(DeviceEvent(time: t, app: Int32.random(in: 1...3, using: &rng), kind: .launch))
            }
        }
        InstantOrder.sort(&events, time: \.time, step: { InstantOrder.step(of: $0.kind) })
        let published = events.filter { $0.kind == .publish }.map(\.time)
        let launches = events.filter { $0.kind == .launch && $0.app == 1 }.map(\.time)
        var fetched: [Double] = []
        var policy = LearnedPolicy(apps: [1], model: DeviceModel(), configuration: SchedulerConfiguration(budget: 24), prior: .none)
        // Rule 6 of the evaluator: newData iff something was published after the last refresh.
        let made = drive(&policy, events: events, until: events.last!.time) { _, t in
            let refreshed = max(launches.last { $0 <= t } ?? -.infinity, fetched.last ?? -.infinity)
            fetched.append(t)
            return published.contains { $0 > refreshed && $0 <= t } ? .newData : .noData
        }
        // After a week of learning, no fetch between 00:00 and 06:00.
        let learned = made.filter { $0.time >= start + 7 * 86_400 }
        #expect(!learned.isEmpty)
        let night = learned.filter { LocalTime.hourOfDay(time: $0.time, utcOffsetSeconds: 0) < 6 }
        #expect(night.isEmpty, "\(night.count) night fetches of \(learned.count)")
    }

    @Test func isDeterministic() {
        let events = habitTrace(seed: 31)
        var a = LearnedPolicy(apps: [0, 1, 2], model: DeviceModel(), configuration: SchedulerConfiguration(budget: 12), prior: .none)
        var b = a
        #expect(drive(&a, events: events, until: events.last!.time) == drive(&b, events: events, until: events.last!.time))
    }
}
