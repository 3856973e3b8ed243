import FetchCastCore
@testable import FetchCastModel
import Testing

/// A light user's budget is slack, and a looser habit gets a look ahead of it
/// (docs/model.md, "Where the budget is slack"); under a cap its habits fill, it is not.
struct SlackBudgetTests {
    typealias A = AnticipationTests

    /// `news` once a day at 08:00, 08:30, … or 10:30 in turn (each half hour holds a sixth of the
    /// days: a loose habit), `chat` at 12:30 and 21:10 every day: six weeks.
    static let looseReader = (0..<42).flatMap { d in
        [A.launch(A.news, day: d, hour: 8 + Double(d % 6) / 2), A.launch(A.chat, day: d, hour: 12.5), A.launch(A.chat, day: d, hour: 21 + 10.0 / 60)]
    }

    /// Day 42, a Monday, at 03:00.
    static let asked = A.monday + 42 * 86_400 + 3 * 3600

    static func newsLooks(_ policy: LearnedPolicy) -> [ScheduledFetch] {
        policy.plan(from: asked, horizon: 12 * 3600).filter { $0.app == A.news }
    }

    @Test func aLightUsersLooseHabitGetsALookAheadOfIt() throws {
        let policy = A.follower(Self.looseReader)
        let usual = try #require(policy.pacer.usualDayOpportunities(atLeast: policy.configuration.minimumValue))
        #expect(usual < 24, "a usual day holds \(usual) opportunities worth the minimum value")
        #expect(policy.anticipationShare == 0.1)
        // Looks ahead of the loose habit's half hours, each citing the days that hold a session.
        let looks = Self.newsLooks(policy).filter { A.localHour($0.time) < 10.5 }
        #expect(looks.count >= 3, "\(looks.map { (A.localHour($0.time), $0.launchProbability) })")
        for look in looks {
            #expect(A.localHour(look.time) >= 7.5, "at \(A.localHour(look.time))")
            guard case .habit = look.reason else { Issue.record("reason \(look.reason)"); continue }
            let days = try #require(policy.model.habitDays(app: A.news, at: look.time))
            #expect(days.days >= 1, "at \(A.localHour(look.time)): \(days.days) of \(days.of) \(days.daysCounted)")
        }
    }

    @Test func withOneShareOnEveryDayTheLooseHabitIsNotLookedAhead() {
        var configuration = SchedulerConfiguration(budget: 24)
        configuration.slackAnticipationShare = configuration.anticipationMinimumShare
        var policy = LearnedPolicy(
            apps: [A.news, A.chat], model: DeviceModel(), configuration: configuration, prior: .none, mode: .following)
        for e in Self.looseReader { policy.observe(e) }
        #expect(policy.anticipationShare == 0.2)
        #expect(Self.newsLooks(policy).isEmpty, "\(Self.newsLooks(policy).map { A.localHour($0.time) })")
    }

    @Test func theSameHistoryUnderACapOfTwoIsNotSlack() throws {
        // chat's two habits fill a usual day's two fetches: the cap, not the minimum value, binds.
        let policy = A.follower(Self.looseReader, budget: 2)
        let usual = try #require(policy.pacer.usualDayOpportunities(atLeast: policy.configuration.minimumValue))
        #expect(usual >= 2, "a usual day holds \(usual) opportunities worth the minimum value")
        #expect(policy.anticipationShare == 0.2)
        #expect(Self.newsLooks(policy).isEmpty)
    }

    @Test func aWeekdayHabitLentToTheWeekendIsNoSlackLook() {
        // news at 08:00 on weekdays only: a Saturday's share borrows from the weekdays, and the
        // slack share does not make it a habit of Saturdays (AnticipationTests has the same at 0.2).
        let events = A.dailyReader(days: 0..<26) { d in d % 7 < 5 }
        let policy = A.follower(events)
        #expect(policy.anticipationShare == 0.1)
        let saturday = A.monday + 26 * 86_400
        let plan = policy.plan(from: saturday + 3 * 3600, horizon: 20 * 3600)
        #expect(!plan.contains { $0.app == A.news }, "\(plan.map { ($0.app, A.localHour($0.time)) })")
    }
}
