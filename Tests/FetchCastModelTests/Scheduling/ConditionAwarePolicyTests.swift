import FetchCastCore
import FetchCastModel
import FetchCastTrace
import Testing

/// The live policy told the device's conditions: a higher bar for a wakeup it would start on
/// a metered network on battery (or, once the device's outcomes are known, a price in sessions
/// made fresh), a lower one on Wi-Fi, the condition-blind decisions while charging.
struct ConditionAwarePolicyTests {
    let apps: [Int32] = [0, 1, 2, 3, 4, 5]

    /// `wakeupCost` `nil` (the default here): the bar factors alone, as before the cost existed.
    func run(
        _ conditions: DeviceConditions?, seed: UInt64, factor: Double = 1.15, wifiFactor: Double = 0.8, aware: Bool = true,
        wakeupCost: Double? = nil, deferral: Bool = true
    ) -> [MadeFetch] {
        let events = habitTrace(seed: seed)
        var configuration = SchedulerConfiguration(budget: 24)
        configuration.cellularBarFactor = factor
        configuration.wifiBarFactor = wifiFactor
        configuration.conditionAware = aware
        configuration.cellularWakeupCost = wakeupCost
        if !deferral { configuration.deferredLookLead = nil }
        var policy = LearnedPolicy(apps: apps, model: DeviceModel(), configuration: configuration, prior: .none)
        if let conditions { policy.observeConditions(conditions, at: events[0].time - 1, utcOffsetSeconds: events[0].utcOffsetSeconds) }
        return drive(&policy, events: events, until: events.last!.time + 86_400)
    }

    static let cellular = DeviceConditions(network: .cellular, power: .battery)

    @Test(arguments: [31 as UInt64, 32, 33])
    func whileChargingItDecidesAsBlind(seed: UInt64) {
        let blind = run(nil, seed: seed)
        #expect(!blind.isEmpty)
        #expect(run(DeviceConditions(network: .cellular, power: .charging), seed: seed) == blind)
        #expect(run(DeviceConditions(network: .wifi, power: .charging), seed: seed) == blind)
    }

    @Test(arguments: [31 as UInt64, 32, 33])
    func onWiFiItLowersTheBar(seed: UInt64) {
        let blind = run(nil, seed: seed)
        let wifi = DeviceConditions(network: .wifi, power: .battery)
        // Always on Wi-Fi (so never "about to leave it"): the Wi-Fi factor is the only difference.
        #expect(run(wifi, seed: seed, wifiFactor: 1) == blind)
        #expect(run(wifi, seed: seed) != blind)
        // A bar no higher than the minimum value: every moment worth it starts a wakeup.
        let lowest = run(wifi, seed: seed, wifiFactor: 1e-9)
        #expect(lowest.count > blind.count, "\(lowest.count) fetches on Wi-Fi against \(blind.count) blind")
    }

    @Test(arguments: [31 as UInt64, 32, 33])
    func onCellularItStartsFewerWakeups(seed: UInt64) {
        let blind = run(nil, seed: seed)
        let cellular = run(Self.cellular, seed: seed)
        #expect(cellular.count < blind.count, "\(cellular.count) fetches on cellular against \(blind.count) blind")
        // The factor and the looks ahead deferred inside their windows (docs/model.md, "Where it
        // looks") are the only differences: at 1 without deferral the decisions are the blind
        // ones, and a bar no value clears starts no wakeup at all.
        #expect(run(Self.cellular, seed: seed, factor: 1, deferral: false) == blind)
        #expect(run(Self.cellular, seed: seed, factor: 1e9).isEmpty)
    }

    @Test func unknownNetworkCountsAsCellular() {
        #expect(run(DeviceConditions(battery: 80), seed: 34) == run(Self.cellular, seed: 34))
        #expect(run(DeviceConditions(battery: 80), seed: 34, wakeupCost: 0.045) == run(Self.cellular, seed: 34, wakeupCost: 0.045))
    }

    /// Until the device has enough resolved forecasts the bar factor decides; from then on a
    /// cost no wakeup is worth starts none on cellular: the fetches are the factor rule's up to
    /// that moment, and none after.
    @Test(arguments: [31 as UInt64, 32, 33])
    func onCellularAWakeupIsPricedOnceTheOutcomesAreKnown(seed: UInt64) {
        let factorRule = run(Self.cellular, seed: seed)
        let priced = run(Self.cellular, seed: seed, wakeupCost: 0.045)
        let prohibitive = run(Self.cellular, seed: seed, wakeupCost: 1e9)
        #expect(!prohibitive.isEmpty, "the first fetches come before the outcomes are known")
        #expect(prohibitive.count < factorRule.count)
        #expect(prohibitive == Array(factorRule.prefix(prohibitive.count)))
        #expect(priced != factorRule)
        // A lower price starts at least as many wakeups (moments with a fetch) as a higher one.
        let wakeups = { (fetches: [MadeFetch]) in Set(fetches.map(\.time)).count }
        #expect(wakeups(run(Self.cellular, seed: seed, wakeupCost: 0.01)) >= wakeups(run(Self.cellular, seed: seed, wakeupCost: 0.2)))
    }

    @Test(arguments: [31 as UInt64, 32])
    func theCostAppliesOnlyOnAMeteredNetworkOnBattery(seed: UInt64) {
        for conditions in [DeviceConditions(network: .wifi, power: .battery), DeviceConditions(network: .cellular, power: .charging)] {
            #expect(run(conditions, seed: seed, wakeupCost: 1e9) == run(conditions, seed: seed))
        }
        #expect(run(nil, seed: seed, wakeupCost: 1e9) == run(nil, seed: seed), "without conditions: the blind policy")
    }

    @Test func aBlindPolicyIgnoresConditions() {
        #expect(run(Self.cellular, seed: 35, aware: false) == run(nil, seed: 35))
    }
}
