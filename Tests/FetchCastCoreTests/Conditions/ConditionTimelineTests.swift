import Testing
import FetchCastCore

struct ConditionTimelineTests {
    /// Three rows: Wi-Fi + charging at 100 s, battery 15 % at 200 s, cellular at 300 s, and a
    /// second row at 300 s turning Low Power Mode on.
    private func tiny() -> ConditionTimeline {
        var timeline = ConditionTimeline()
        timeline.append(ConditionChange(network: .wifi, power: .charging), atMicros: 100_000_000)
        timeline.append(ConditionChange(battery: 15), atMicros: 200_000_000)
        timeline.append(ConditionChange(network: .cellular), atMicros: 300_000_000)
        timeline.append(ConditionChange(lowPower: true), atMicros: 300_000_000)
        return timeline
    }

    @Test func everythingIsUnknownBeforeTheFirstRow() {
        let c = tiny().conditions(atMicros: 99_999_999)
        #expect(c == .unknown)
        // Unknown is priced and constrained as cellular, on battery, not low, Low Power Mode off.
        #expect(c.effectiveNetwork == .cellular)
        #expect(!c.isCharging && !c.isBatteryLow && !c.isLowPowerMode && !c.isUnmetered && c.isConnected)
    }

    @Test func aRowHoldsFromItsInstantUntilTheNextRowThatSetsTheSameField() {
        let timeline = tiny()
        #expect(timeline.conditions(atMicros: 100_000_000) == DeviceConditions(network: .wifi, power: .charging))
        #expect(timeline.conditions(atMicros: 199_999_999) == DeviceConditions(network: .wifi, power: .charging))
        // The battery row keeps the network and power of the row before it.
        #expect(timeline.conditions(atMicros: 250_000_000) == DeviceConditions(network: .wifi, power: .charging, battery: 15))
        // Both rows at 300 s apply at 300 s.
        #expect(timeline.conditions(atMicros: 300_000_000) == DeviceConditions(network: .cellular, power: .charging, battery: 15, lowPower: true))
        #expect(timeline.conditions(at: 1e9) == timeline.latest)
        #expect(timeline.times == [100_000_000, 200_000_000, 300_000_000])
    }

    @Test func readsTheRowAtAnInstantGivenInSeconds() {
        var timeline = ConditionTimeline()
        // 1.234567 s cannot be written exactly in binary; the row still applies at it.
        timeline.append(ConditionChange(network: .offline), atMicros: 1_234_567)
        #expect(timeline.conditions(at: Double(1_234_567) / 1_000_000).network == .offline)
        #expect(timeline.conditions(at: 1.234566).network == nil)
    }

    @Test(arguments: [(UInt8(19), true), (20, false), (0, true), (100, false)])
    func theBatteryIsLowBelowTwentyPercent(level: UInt8, low: Bool) {
        #expect(DeviceConditions(battery: level).isBatteryLow == low)
    }

    @Test func offlineIsNeitherConnectedNorUnmetered() {
        let c = DeviceConditions(network: .offline)
        #expect(!c.isConnected && !c.isUnmetered)
        #expect(DeviceConditions(network: .wifi).isUnmetered)
    }
}
