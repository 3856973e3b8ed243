import FetchCastCore
import FetchCastModel
import FetchCastTrace
import Testing

/// Hand-computed habits: when a device is usually on Wi-Fi and charging, by hour of the week.
struct ConditionHabitsTests {
    /// Monday 2023-11-13 00:00 UTC.
    static let monday = 1_699_833_600.0
    static let wifi = DeviceConditions(network: .wifi, power: .charging)
    static let cellular = DeviceConditions(network: .cellular, power: .battery)

    /// On Wi-Fi and charging 19:00–07:00 and on cellular on battery 07:00–19:00 (UTC), for `days` days.
    static func homeEvenings(days: Int) -> ConditionHabits {
        var h = ConditionHabits()
        h.observe(wifi, at: monday, utcOffsetSeconds: 0)
        for day in 0..<days {
            let d = monday + Double(day) * 86_400
            h.observe(cellular, at: d + 7 * 3600, utcOffsetSeconds: 0)
            h.observe(wifi, at: d + 19 * 3600, utcOffsetSeconds: 0)
        }
        return h.through(monday + Double(days) * 86_400)
    }

    @Test func sharesAreShrunkTowardsTheDevicesOverallShare() throws {
        let h = Self.homeEvenings(days: 14)
        // Monday 20:00: two weeks × 3600 s, all on Wi-Fi; overall half the time on Wi-Fi, so
        // (7200 + 3600 × 0.5) / (7200 + 3600).
        let evening = try #require(h.wifiShare(slot: 20))
        #expect(abs(evening - 9000.0 / 10_800) < 1e-12)
        // Monday 10:00: (0 + 1800) / 10800.
        let morning = try #require(h.wifiShare(slot: 10))
        #expect(abs(morning - 1800.0 / 10_800) < 1e-12)
        #expect(h.chargingShare(slot: 20) == evening)
    }

    @Test func nothingKnownSaysNothing() {
        var h = ConditionHabits()
        #expect(h.isEmpty)
        #expect(h.wifiShare(slot: 0) == nil)
        // A state that only sets the battery level says nothing of the network or power.
        h.observe(DeviceConditions(battery: 80), at: Self.monday, utcOffsetSeconds: 0)
        #expect(h.through(Self.monday + 86_400).isEmpty)
    }

    @Test func aStateHoldsAtMostTwelveHoursWithoutARow() throws {
        var h = ConditionHabits()
        h.observe(Self.wifi, at: Self.monday, utcOffsetSeconds: 0)
        h.observe(Self.cellular, at: Self.monday + 3 * 86_400, utcOffsetSeconds: 0)
        let later = h.through(Self.monday + 3 * 86_400 + 3600)
        // Monday 00:00–12:00 on Wi-Fi (the rest of the gap uncounted), Thursday 00:00–01:00 on
        // cellular: Monday 11:00 is (3600 + 3600 × 12/13) / 7200, Monday 13:00 only the prior.
        #expect(abs(later.wifiShare(slot: 11)! - (3600 + 3600 * 12.0 / 13) / 7200) < 1e-12)
        #expect(abs(later.wifiShare(slot: 13)! - 12.0 / 13) < 1e-12)
    }

    @Test func slotsFollowTheRowsLocalTime() {
        var h = ConditionHabits()
        // 19:00 UTC at UTC+02:00 is 21:00 local.
        h.observe(Self.wifi, at: Self.monday + 19 * 3600, utcOffsetSeconds: 7200)
        h.observe(Self.cellular, at: Self.monday + 20 * 3600, utcOffsetSeconds: 7200)
        let t = h.through(Self.monday + 21 * 3600)
        #expect(t.wifiShare(slot: 21)! > t.wifiShare(slot: 22)!)
    }

    @Test func expectedConditionsAreTheCurrentOnesWithinTheHorizonThenTheUsualOnes() {
        let h = Self.homeEvenings(days: 14)
        let now = Self.monday + 14 * 86_400 + 10 * 3600  // Monday 10:00, on cellular
        let current = Self.cellular
        // Within τ: as now, even though the hour is not usual.
        #expect(h.expected(at: now + 600, now: now, current: DeviceConditions(network: .wifi), horizon: 1800, utcOffsetSeconds: 0)
            == DeviceConditions(network: .wifi))
        // At 21:00: usually on Wi-Fi and charging.
        let evening = h.expected(at: now + 11 * 3600, now: now, current: current, horizon: 1800, utcOffsetSeconds: 0)
        #expect(evening.network == .wifi && evening.power == .charging)
        // At 12:00: usually on cellular on battery.
        let noon = h.expected(at: now + 2 * 3600, now: now, current: current, horizon: 1800, utcOffsetSeconds: 0)
        #expect(noon.network == .cellular && noon.power == .battery)
    }
}
