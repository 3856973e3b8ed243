@testable import FetchCastModel
import Testing

struct HabitLikelihoodTests {
    static let monday: Double = 1_709_510_400  // 2024-03-04T00:00:00Z

    /// News about 07:50 (±20 minutes, in a fixed pattern) on six days of seven, for six weeks
    /// (UTC): a habit as people have them.
    static func habit(days: Int = 42) -> [DeviceEvent] {
        let jitter: [Double] = [-20, 5, 12, -8, 17, -3, 0, 9, -14, 20, -6]
        return (0..<days).filter { $0 % 7 != 3 }.map {
            DeviceEvent(time: monday + Double($0) * 86_400 + (7 * 60 + 50 + jitter[$0 % jitter.count]) * 60, app: 1, kind: .launch)
        }
    }

    @Test func aHabitIsPredictedBetterByTheHabitClock() {
        let score = HabitLikelihood(configuration: ModelConfiguration(tau: 1800)).score(Self.habit())
        // Scored once the log speaks (2 days of use), every half hour the app has been idle 2 h.
        #expect(score.windows > 30 * 40)
        #expect(score.launched >= 25)
        #expect(score.meanLogLossHabit < score.meanLogLossBase, "habit \(score.meanLogLossHabit), hours \(score.meanLogLossBase)")
        #expect(score.meanBrierHabit < score.meanBrierBase, "habit \(score.meanBrierHabit), hours \(score.meanBrierBase)")
    }

    /// A habit speaks once the device's log covers `habitMinimumObservedDays` days of use (2):
    /// one day's launches score nothing (a habit is read from the days before the window's, and
    /// there are none yet, so 1 would score nothing either), and a second day's score its half
    /// hours (3 would not).
    @Test func nothingIsScoredBeforeTheLogCoversTwoDays() {
        let likelihood = HabitLikelihood(configuration: ModelConfiguration(tau: 1800))
        let oneDay = [DeviceEvent(time: Self.monday + 8 * 3600, app: 1, kind: .launch),
                      DeviceEvent(time: Self.monday + 20 * 3600, app: 2, kind: .launch)]
        #expect(likelihood.score(oneDay).windows == 0)
        let twoDays = oneDay + [DeviceEvent(time: Self.monday + 86_400 + 8 * 3600, app: 2, kind: .launch),
                                DeviceEvent(time: Self.monday + 86_400 + 20 * 3600, app: 2, kind: .launch)]
        #expect(likelihood.score(twoDays).windows > 0)
    }

    @Test func theLossIsWhatTheChancesSay() {
        var score = HabitLikelihood.Score()
        score.add(base: 0.5, habit: 0.9, launched: true)
        score.add(base: 0.5, habit: 0.2, launched: false)
        #expect(score.windows == 2 && score.launched == 1)
        #expect(abs(score.meanLogLossBase - 0.693_147) < 1e-5)
        // (−ln 0.9 − ln 0.8) / 2 and ((0.1)² + (0.2)²) / 2.
        #expect(abs(score.meanLogLossHabit - 0.164_252) < 1e-5)
        #expect(abs(score.meanBrierHabit - 0.025) < 1e-12)
        #expect(abs(score.meanBrierBase - 0.25) < 1e-12)
    }
}
