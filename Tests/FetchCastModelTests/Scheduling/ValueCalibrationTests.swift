@testable import FetchCastModel
import Testing

struct ValueCalibrationTests {
    let tau = 1800.0

    @Test func withoutResolvedForecastsTheFactorIsOne() {
        var c = ValueCalibration(tau: tau)
        #expect(c.factor(1) == 1)
        c.weighed(1, value: 0.2, at: 0)
        // Not resolved yet: neither a launch nor τ has passed.
        c.expire(before: 1000)
        #expect(c.factor(1) == 1)
    }

    @Test func anAppOpenedMoreOftenThanForecastGetsAFactorAboveOne() {
        var c = ValueCalibration(tau: tau)
        // Forty forecasts of 0.1, every other one followed by a session start within τ.
        for i in 0..<40 {
            let t = Double(i) * 10_000
            c.weighed(1, value: 0.1, at: t)
            if i.isMultiple(of: 2) { c.launched(1, at: t + 600, sessionStart: true) }
        }
        c.expire(before: 40 * 10_000)
        // (20 hits + 4) / (40 × 0.1 + 4) = 3.
        #expect(abs(c.factor(1) - 3) < 1e-9)
        #expect(c.factor(2) == 1, "another app keeps its own factor")
    }

    @Test func aLaunchThatIsNoSessionStartOrComesTooLateIsAMiss() {
        var c = ValueCalibration(tau: tau)
        c.weighed(1, value: 0.5, at: 0)
        c.launched(1, at: 60, sessionStart: false)
        c.weighed(1, value: 0.5, at: 10_000)
        c.launched(1, at: 10_000 + tau + 1, sessionStart: true)
        // (0 + 4) / (1 + 4)
        #expect(abs(c.factor(1) - 0.8) < 1e-9)
    }

    @Test func aLaunchResolvesOnlyEarlierForecasts() {
        var c = ValueCalibration(tau: tau)
        c.weighed(1, value: 0.5, at: 100)
        c.launched(1, at: 50, sessionStart: true)
        #expect(c.factor(1) == 1, "a forecast is about launches after it")
        c.launched(1, at: 200, sessionStart: true)
        #expect(abs(c.factor(1) - 5 / 4.5) < 1e-9)
    }

    /// Forecasts at 0.2 that come true one time in five and at 0.6 three times in five: the line
    /// through them is the identity.
    private func calibrated(reacting: Bool, rounds: Int) -> ValueCalibration {
        var c = ValueCalibration(tau: tau)
        var t = 0.0
        for i in 0..<rounds {
            for (value, hits) in [(0.2, 1), (0.6, 3)] {
                // Two apps, so no app's outcome factor moves one forecast's scaled value much.
                let app: Int32 = i.isMultiple(of: 2) ? 1 : 2
                for k in 0..<5 {
                    t += 10_000
                    c.weighed(app, value: value / c.factor(app), at: t, reacting: reacting)
                    if k < hits { c.launched(app, at: t + 60, sessionStart: true) }
                }
            }
        }
        c.expire(before: t + 10 * tau)
        return c
    }

    @Test func theOutcomeLineTurnsScaledValuesIntoChances() throws {
        let c = calibrated(reacting: false, rounds: 10)
        let low = try #require(c.outcome(of: 0.2, reacting: false)), high = try #require(c.outcome(of: 0.6, reacting: false))
        #expect(abs(low - 0.2) < 1e-9 && abs(high - 0.6) < 1e-9)
        // No reacting forecasts yet: that kind answers with the line of all forecasts.
        #expect(c.outcome(of: 0.4, reacting: true) == c.outcome(of: 0.4))
    }

    @Test func noLineBeforeFiftyResolvedForecasts() {
        #expect(calibrated(reacting: true, rounds: 4).outcome(of: 0.3) == nil)  // 40 forecasts
        #expect(calibrated(reacting: true, rounds: 5).outcome(of: 0.3) != nil)  // 50
    }

    @Test func aFlatLineKeepsTheLeastSlope() throws {
        var c = ValueCalibration(tau: tau)
        for i in 0..<100 {
            c.weighed(1, value: i.isMultiple(of: 2) ? 0.2 : 0.8, at: Double(i) * 10_000)
        }
        c.expire(before: 2_000_000)
        // Never a hit: the fitted slope is 0, kept at the least one.
        let low = try #require(c.outcome(of: 0.2)), high = try #require(c.outcome(of: 0.8))
        #expect(abs((high - low) / 0.6 - OutcomeFit.slopes.lowerBound) < 1e-9)
    }
}
