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
}
