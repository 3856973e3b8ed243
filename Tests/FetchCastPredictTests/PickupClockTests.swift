import FetchCastCore
import FetchCastStore
import FetchCastTestSupport
import FetchCastTrace
import Foundation
import Testing
@testable import FetchCastModel
@testable import FetchCastPredict

/// The pickup clock (docs/model.md, "The pickup clock"): a plan asked at night looks before the
/// device's usual first use after a silence, for the app it is usually first used with, again
/// while it stays silent, and says why in counts a person can check against the history.
struct PickupClockTests {
    /// Monday 2024-03-04 00:00 local (UTC+1), as Unix seconds.
    static let monday = 1_709_506_800.0
    static let offset: Int32 = 3600
    static let chat: Int32 = 0, mail: Int32 = 1
    static let names = ["com.whatsapp", "mail"]

    static func launch(_ app: Int32, day: Int, hour: Double) -> DeviceEvent {
        DeviceEvent(time: monday + Double(day) * 86_400 + hour * 3600, utcOffsetSeconds: offset, app: app, kind: .launch)
    }

    /// Four weeks of a heavy user. On 14 of the 20 weekdays (the 1st to 7th and 11th to 17th)
    /// the device is first used at 07:50 (mail), with com.whatsapp at 07:55 on 12 of them (not
    /// the 1st and 2nd); on the other 6 at 09:00 (mail, com.whatsapp at 09:02). The very first
    /// launch ends no known silence: 13 pickups at 07:50, 12 of them with com.whatsapp. Weekends start at
    /// 10:00. Then mail hourly at :20 from 10:20 to 22:20 and com.whatsapp at 12:50, 16:50 and
    /// 20:50 every day: opened more than twice a day, com.whatsapp has no habit to speak of,
    /// and no other silence lasts 2 h.
    static func heavyUser() -> [DeviceEvent] {
        var events: [DeviceEvent] = []
        var weekday = 0
        for day in 0..<28 {
            if day % 7 < 5 {
                if weekday % 10 < 7 {
                    events.append(launch(mail, day: day, hour: 7 + 50.0 / 60))
                    if weekday >= 2 { events.append(launch(chat, day: day, hour: 7 + 55.0 / 60)) }
                } else {
                    events.append(launch(mail, day: day, hour: 9))
                    events.append(launch(chat, day: day, hour: 9 + 2.0 / 60))
                }
                weekday += 1
            } else {
                events.append(launch(mail, day: day, hour: 10))
            }
            for hour in 10...22 {
                events.append(launch(mail, day: day, hour: Double(hour) + 20.0 / 60))
                if [12, 16, 20].contains(hour) { events.append(launch(chat, day: day, hour: Double(hour) + 50.0 / 60)) }
            }
        }
        return events.sorted { $0.time < $1.time }
    }

    static func follower(_ events: [DeviceEvent]) -> LearnedPolicy {
        var policy = LearnedPolicy(
            apps: [chat, mail], model: DeviceModel(), configuration: SchedulerConfiguration(budget: 24), prior: .none, mode: .following)
        for e in events { policy.observe(e) }
        return policy
    }

    @Test func aPlanAtTwoLooksBeforeTheFirstPickupAndCountsItsDays() throws {
        let policy = Self.follower(Self.heavyUser())
        // Monday of the fifth week, 02:00 local.
        let at = Self.monday + 28 * 86_400 + 2 * 3600
        let plan = policy.plan(from: at)
        let shown = plan.map { ($0.app, ($0.time - at) / 3600 + 2, $0.reason) }
        // The look at 07:45: the window (07:45, 08:15] holds the 07:50 pickups, each a launch of mail.
        let look = at + 5.75 * 3600
        let mail = try #require(plan.first { $0.app == Self.mail && $0.time == look }, "\(shown)")
        guard case .pickup(let p) = mail.reason else { Issue.record("reason \(mail.reason)"); return }
        #expect(p == mail.launchProbability)
        // Of the weekdays before, all but the first (whose first launch ends no known silence)
        // were still silent at 07:45, and 13 were first used by 08:15, each with mail.
        let w = try #require(policy.model.pickupWindow(app: Self.mail, at: look))
        #expect((w.observedDays, w.pickupDays, w.weekend) == (19, 13, false))
        // Every one of the 41 pickups before began with mail: the 27 mornings' (all but the very
        // first launch's) and the 14 10:20s after a 07:50 session (2 h 25 min without a launch);
        // com.whatsapp is opened in those first sessions, never first: the launch's own look fetches it.
        #expect((w.pickups, w.appPickups) == (41, 41))
        #expect(policy.model.pickupWindow(app: Self.chat, at: look)?.appPickups == 0)
        #expect(!plan.contains { $0.app == Self.chat && $0.reason.isPickup }, "\(shown)")
        let text = Explanation.reason(
            for: mail, device: "19_F", model: policy.model, tau: 1800, ownSessions: 20, name: { Self.names[Int($0)] })
        #expect(text == "19_F was first used by 08:15 on 13 of the 19 weekdays it was still silent at 07:45, "
            + "and 41 of its last 41 pickups after 2 h unused began with mail (p=\(CSVField.fixed(p, decimals: 2)))")
        // The chance is the recency-weighted share of those days: 13 of 19 weighs the later days more.
        #expect(CSVField.fixed(p, decimals: 2) == "0.64", "\(p)")
    }

    @Test func theLooksGoOnWhileTheDeviceStaysSilent() throws {
        // The hazard: once 07:45–08:15 has passed without a launch, only the 6 weekdays first
        // used at 09:00 are still silent, and all 6 were first used by 09:25, with mail: a
        // second look, at 08:55, fetches it again with p = 1.
        let policy = Self.follower(Self.heavyUser())
        let at = Self.monday + 28 * 86_400 + 2 * 3600
        let plan = policy.plan(from: at)
        let shown = plan.map { ($0.app, ($0.time - at) / 3600 + 2, $0.reason) }
        let second = at + (6 + 55.0 / 60) * 3600
        let mail = try #require(plan.first { $0.app == Self.mail && $0.time == second }, "\(shown)")
        let w = try #require(policy.model.pickupWindow(app: Self.mail, at: second))
        #expect((w.observedDays, w.pickupDays, w.appPickups, w.everyDay) == (6, 6, 41, false))
        #expect(mail.launchProbability == 1, "\(mail.launchProbability)")
        // Nothing before a pickup between the two looks, nor before the first.
        let mails = plan.filter { $0.reason.isPickup && $0.time <= second }.map(\.time)
        #expect(mails == [at + 5.75 * 3600, second], "\(shown)")
    }

    @Test func noLookOnceTheSilenceHasLastedFourteenHours() throws {
        // Four weeks, the last day's use ending at 15:20 (16 h 25 min before the next morning's
        // 07:45 look), then a fetch of com.whatsapp at 07:40: a model whose last event comes
        // long after its last launch, as a stored model's may.
        let lastDay = Self.monday + 27 * 86_400
        var model = DeviceModel()
        for e in Self.heavyUser() where e.time < lastDay + 15.5 * 3600 { model.observe(e) }
        let fetchedAt = Self.monday + 28 * 86_400 + (7 + 40.0 / 60) * 3600
        model.observe(DeviceEvent(time: fetchedAt, utcOffsetSeconds: Self.offset, app: Self.chat, kind: .fetch, result: .noData))
        let silence = try fetchedAt - #require(model.lastLaunchOfAnyApp)
        #expect(silence > LearnedPolicy.pickupLongestSilence)
        let policy = LearnedPolicy(
            apps: [Self.chat, Self.mail], model: model, configuration: SchedulerConfiguration(budget: 24), prior: .none, mode: .following)
        // The mornings' 07:50 pickups would give mail a chance at 07:45, but the silence is
        // longer than the longest the clock speaks after: no look, no fetch before a pickup.
        #expect(policy.pickupLook == nil)
        #expect(model.pickupChance(app: Self.mail, at: fetchedAt + 300) == nil)
        let plan = policy.plan(from: fetchedAt + 60)
        #expect(!plan.contains { $0.reason.isPickup }, "\(plan)")
        // The same morning after a silence of 9 h 25 min (the use ending at 22:20) has the look.
        var recent = DeviceModel()
        for e in Self.heavyUser() { recent.observe(e) }
        #expect(recent.pickupChance(app: Self.mail, at: fetchedAt + 300) != nil)
    }

    /// A late riser: mail hourly from 08:00 to 14:00 every day, so each of its pickups ends a
    /// silence of 18 h; from day `longFrom` on it is used at 08:00 only, so each next pickup
    /// ends a silence of 24 h.
    static func lateRiser(days: Int, longFrom: Int) -> [DeviceEvent] {
        var events: [DeviceEvent] = []
        for day in 0..<days {
            let hours = day >= longFrom ? [8.0] : Array(stride(from: 8.0, through: 14, by: 1))
            for hour in hours { events.append(launch(mail, day: day, hour: hour)) }
        }
        return events
    }

    @Test func theLongestSilenceIsTheDevicesOwn() throws {
        // A heavy user's pickups end nights of 9 h 25 min and mornings of 2 h 25 min: the
        // floor, 14 h.
        var heavy = DeviceModel()
        for e in Self.heavyUser() { heavy.observe(e) }
        #expect(heavy.pickupLongestSilence == LearnedPolicy.pickupLongestSilence)
        // The late riser's 27 pickups each end 18 h of silence: it is looked for until then.
        var late = DeviceModel()
        for e in Self.lateRiser(days: 28, longFrom: 28) { late.observe(e) }
        #expect(late.pickupLog.pickups.count == 27)
        #expect(late.pickupLongestSilence == 18 * 3600)
        let last = try #require(late.lastLaunchOfAnyApp)
        #expect(late.pickupClockSpeaks(at: last + 17.5 * 3600))
        #expect(late.pickupChance(app: Self.mail, at: last + 17.5 * 3600) != nil)
        #expect(!late.pickupClockSpeaks(at: last + 18 * 3600))
        #expect(late.pickupClockRule(from: last + 18 * 3600) == .longSilence(lastLaunch: last, limit: 18 * 3600))
        // A plan asked at 02:00 fetches mail before the 08:00 pickup, 18 h after the last launch.
        let policy = Self.follower(Self.lateRiser(days: 28, longFrom: 28))
        let plan = policy.plan(from: Self.monday + 28 * 86_400 + 2 * 3600)
        #expect(plan.contains { $0.app == Self.mail && $0.reason.isPickup }, "\(plan)")
        // One in ten or more of its pickups after 24 h: the ceiling, a day.
        var away = DeviceModel()
        for e in Self.lateRiser(days: 28, longFrom: 24) { away.observe(e) }
        #expect(PickupLog.longSilence(of: away.pickupLog.pickups) == 24 * 3600)
        #expect(away.pickupLongestSilence == LearnedPolicy.pickupLongestSilenceCeiling)
        // A saved model keeps it.
        let restored = try DeviceModel(binary: late.binaryEncoded())
        #expect(restored.pickupLongestSilence == 18 * 3600)
    }

    /// A scheduler told of one app's events cannot tell the device's silence from a pause of
    /// that app (an app's own backend or `BGAppRefreshTask`, `evaluate --visibility app`): with
    /// ``SchedulerConfiguration/looksBeforePickups`` off it makes no look before a pickup, and a
    /// planned policy that does not see the device turns it off.
    @Test func aSchedulerThatDoesNotSeeTheDeviceMakesNoLookBeforeAPickup() throws {
        let at = Self.monday + 28 * 86_400 + 2 * 3600
        // Not vacuous: told of the device's launches, the 02:00 plan looks before the 07:50 pickup.
        #expect(Self.follower(Self.heavyUser()).plan(from: at).contains { $0.reason.isPickup })
        var configuration = SchedulerConfiguration(budget: 24)
        configuration.looksBeforePickups = false
        var blind = LearnedPolicy(
            apps: [Self.chat, Self.mail], model: DeviceModel(), configuration: configuration, prior: .none, mode: .following)
        for e in Self.heavyUser() { blind.observe(e) }
        #expect(blind.pickupLook == nil)
        let plan = blind.plan(from: at)
        #expect(!plan.contains { $0.reason.isPickup }, "\(plan.map(\.reason))")
        // Everything else still plans: after the evening's last launch, its reactions.
        let evening = Self.monday + 27 * 86_400 + (22 + 21.0 / 60) * 3600
        #expect(blind.plan(from: evening) == Self.follower(Self.heavyUser()).plan(from: evening).filter { !$0.reason.isPickup })
        #expect(!blind.plan(from: evening).isEmpty)
        // The setting is kept with the state.
        let restored = try LearnedPolicy(restoring: try blind.savedState())
        #expect(!restored.configuration.looksBeforePickups)
        #expect(restored.plan(from: at) == plan)
        // `planned` with visibility `app`: one app's events only.
        let oneApp = PlannedPolicy(
            apps: [Self.mail], model: DeviceModel(), configuration: SchedulerConfiguration(budget: 24), prior: .none, seesDevice: false)
        #expect(!oneApp.scheduler.configuration.looksBeforePickups)
        let device = PlannedPolicy(apps: [Self.chat, Self.mail], model: DeviceModel(), configuration: SchedulerConfiguration(budget: 24), prior: .none)
        #expect(device.scheduler.configuration.looksBeforePickups)
    }

    @Test func aSavedSchedulerKeepsItsLookBeforeThePickup() throws {
        var policy = Self.follower(Self.heavyUser())
        // Past the first look (07:45 of the fifth Monday): the next one is pending.
        let look = Self.monday + 28 * 86_400 + 7.75 * 3600
        policy.advance(through: look)
        let pending = try #require(policy.pickupLook)
        #expect(pending > look)
        let restored = try LearnedPolicy(restoring: try policy.savedState())
        #expect(restored.pickupLook == pending)
        #expect(restored.plan(from: look + 60) == policy.plan(from: look + 60))
        // A state of the format before the pickup clock (6) is refused, not misread.
        var old = try policy.savedState()
        old[4] = 6
        #expect(throws: (any Error).self) { try LearnedPolicy(restoring: old) }
    }

    @Test func theLivePolicyMakesTheFirstPickupFresh() {
        // Replayed live for a week more of the same days: each 07:50 pickup (mail) finds a fetch
        // of mail made in the 30 min before it.
        let events = Self.heavyUser()
        var policy = LearnedPolicy(
            apps: [Self.chat, Self.mail], model: DeviceModel(), configuration: SchedulerConfiguration(budget: 24), prior: .none)
        var fetches: [Double] = []
        var out: [PlannedFetch] = []
        func run(until t: Double) {
            while let w = policy.nextWakeup, w <= t {
                out.removeAll()
                policy.wake(at: w, into: &out)
                for f in out {
                    if f.app == Self.mail { fetches.append(w) }
                    policy.didFetch(app: f.app, at: w, result: .newData)
                }
            }
        }
        for e in events {
            run(until: e.time)
            policy.observe(e)
        }
        // Weekday mornings of the fifth week, with the 07:50 pickup.
        var fresh = 0
        for day in 28..<33 {
            let pickup = Self.monday + Double(day) * 86_400 + (7 + 50.0 / 60) * 3600
            run(until: pickup - 1)
            if fetches.contains(where: { $0 < pickup && pickup - $0 <= 1800 }) { fresh += 1 }
            for e in [Self.launch(Self.mail, day: day, hour: 7 + 50.0 / 60), Self.launch(Self.chat, day: day, hour: 7 + 55.0 / 60)] {
                run(until: e.time)
                policy.observe(e)
            }
            for hour in 10...22 {
                let e = Self.launch(Self.mail, day: day, hour: Double(hour) + 20.0 / 60)
                run(until: e.time)
                policy.observe(e)
            }
        }
        #expect(fresh == 5, "\(fresh) of 5 weekday pickups fresh")
    }
}

/// `predict` at 02:00 local, for every device of the bundled sample with at least 7 days of use,
/// lists a fetch in the 3 h before the device's median first pickup of that kind of day (a day's
/// first launch from 02:00 on after 2 h or more without one; over every day when fewer than 3
/// days of that kind have one).
struct SamplePickupPlanTests {
    private static let sample = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Data/ubiqlog-sample.csv.gz").path

    /// A device's launches: Unix seconds and the UTC offset then.
    struct Launches {
        var times: [(time: Double, offset: Int32)] = []
    }

    @Test func tomorrowsPlanLooksBeforeEachDevicesFirstPickup() async throws {
        let symbols = SymbolTable()
        let reader = try TraceReader(path: Self.sample, symbols: symbols)
        var events: [EncodedEvent] = []
        while try reader.next(into: &events, maxCount: 1 << 20, onInvalid: { _, _ in }) {}
        var devices: [Int32: Launches] = [:]
        for e in events where e.kind == .launch {
            devices[e.device, default: Launches()].times.append((Double(e.timeMicros) / 1_000_000, e.utcOffsetSeconds))
        }
        let temporary = try TemporaryStore()
        let store = try temporary.open()
        _ = try Ingestor(store: store, options: .init(now: { 1_700_000_000 })).ingest(path: Self.sample)
        let snapshot = try await ModelRepository(store: store).refresh()
        var checked = 0
        var misses: [String] = []
        for (symbol, launches) in devices.sorted(by: { $0.key < $1.key }) {
            let name = symbols.name(symbol)
            let times = launches.times.sorted { $0.time < $1.time }
            let days = Set(times.map { LocalTime.day(time: $0.time, utcOffsetSeconds: $0.offset) })
            guard days.count >= 7, let last = times.last else { continue }
            // Asked at the first 02:00 local after the last launch, for that day.
            var planDay = LocalTime.day(time: last.time, utcOffsetSeconds: last.offset)
            if LocalTime.startOfDay(planDay, utcOffsetSeconds: last.offset) + 2 * 3600 <= last.time { planDay += 1 }
            let midnight = LocalTime.startOfDay(planDay, utcOffsetSeconds: last.offset)
            let at = midnight + 2 * 3600
            let weekend = CivilDate.weekday(days: planDay) >= 5
            // Each day's first pickup: its first launch from 02:00 on after 2 h or more without one.
            var firsts: [Int: Double] = [:], allFirsts: [Int: Double] = [:]
            for (i, l) in times.enumerated() where i > 0 && l.time - times[i - 1].time >= 7200 {
                let day = LocalTime.day(time: l.time, utcOffsetSeconds: l.offset)
                let second = l.time - LocalTime.startOfDay(day, utcOffsetSeconds: l.offset)
                guard second >= 2 * 3600, allFirsts[day] == nil else { continue }
                allFirsts[day] = second
                if (CivilDate.weekday(days: day) >= 5) == weekend { firsts[day] = second }
            }
            // Of that kind of day, or of every day when fewer than 3 of that kind have one (the
            // model's own fallback for a thin history of a kind).
            var sorted = firsts.values.sorted()
            if sorted.count < 3 { sorted = allFirsts.values.sorted() }
            guard !sorted.isEmpty else { continue }
            let median = sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
            let target = midnight + median
            var request = PredictionRequest(device: name, at: at, count: 100)
            request.horizon = 86_400
            let plan = try await Predictor.predict(request, snapshot: snapshot)
            let before = plan.filter { $0.fetchAtUnix >= target - 3 * 3600 && $0.fetchAtUnix < target }
            if before.isEmpty { misses.append("\(name): nothing planned in the 3 h before \(Explanation.clock(median)) (\(plan.map(\.fetchAt)))") }
            for p in plan where p.reason.contains("still silent at") {
                #expect(!p.reason.contains(" on 0 of "), "\(name): \(p.reason)")
            }
            checked += 1
        }
        #expect(checked >= 10, "devices checked: \(checked)")
        // Issue 39 item 2 is not met: a look before a pickup fetches at 0.5 × the pacer's bar,
        // which a heavy user's many reactive moments set above most pickups' chances at night
        // (docs/model.md, "The pickup clock"): 3 of the sample's 13 devices are planned for in
        // the 3 h before their median first pickup (a lower bar cost the training users more of
        // their warm launches than it gave their first pickups).
        withKnownIssue("issue 39 item 2: most of the sample's heavy users get no look before their first pickup") {
            #expect(misses.isEmpty, "\(misses)")
        }
        #expect(misses.count <= 10, "\(misses)")
    }
}
