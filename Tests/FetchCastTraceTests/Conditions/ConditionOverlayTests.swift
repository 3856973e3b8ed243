import FetchCastCore
import Foundation
import Testing
@testable import FetchCastTrace
import FetchCastTestSupport

/// Collects written text.
private final class TextCollector: TextOutputStream {
    var text = ""
    func write(_ string: String) { text += string }
}

struct ConditionOverlayTests {
    /// No randomness: every evening on Wi-Fi, no daytime spells, plugged in exactly at night.
    private var deterministic: OverlayOptions {
        var o = OverlayOptions()
        o.stepMinutes = 60
        o.eveningWifiProbability = 1
        o.daytimeWifiProbability = 0
        o.offlineProbability = 0
        o.plugJitterMinutes = 0
        o.drainPerHour = 1
        o.drainPerLaunch = 0
        o.batteryStep = 1
        o.lowPowerProbability = 0
        return o
    }

    @Test func placesTheNightAtTheQuietestHoursTiesFromTenPM() {
        var hours = Array(repeating: 5, count: 24)
        for h in 1...7 { hours[h] = 0 }  // quiet 01:00–08:00
        let simulator = DeviceConditionSimulator(options: OverlayOptions(), launchesByLocalHour: hours)
        #expect(simulator.nightStart == 1)
        #expect(simulator.part(ofHour: 1) == 0 && simulator.part(ofHour: 7) == 0)
        #expect(simulator.part(ofHour: 8) == 2)
        #expect(simulator.part(ofHour: 21) == 1 && simulator.part(ofHour: 0) == 1)  // the 4 evening hours
        #expect(simulator.part(ofHour: 20) == 2)
        let idle = DeviceConditionSimulator(options: OverlayOptions(), launchesByLocalHour: Array(repeating: 0, count: 24))
        #expect(idle.nightStart == 22)
    }

    @Test func simulatesAHandComputedDay() {
        // Launches at 12:00 UTC on two days: the night is 22:00–05:00, the evening 18:00–22:00.
        var hours = Array(repeating: 0, count: 24)
        hours[12] = 2
        let simulator = DeviceConditionSimulator(options: deterministic, launchesByLocalHour: hours)
        #expect(simulator.nightStart == 22)
        let noon: Int64 = 1_384_084_800_000_000  // 2013-11-10T12:00:00Z
        let day: Int64 = 86_400_000_000
        var rng = SplitMix64(seed: 1)
        let rows = simulator.rows(events: [(noon, 0, true), (noon + day, 0, true)], rng: &rng)
        func at(_ hoursAfterNoon: Int64) -> ConditionChange? {
            rows.first { $0.timeMicros == noon + hoursAfterNoon * 3_600_000_000 }?.change
        }
        // The first step reports everything; 80 % less one hour's drain.
        #expect(at(0) == ConditionChange(network: .cellular, power: .battery, battery: 79, lowPower: false))
        #expect(at(1) == ConditionChange(battery: 78))
        // 18:00: home Wi-Fi, six more hours drained.
        #expect(at(6) == ConditionChange(network: .wifi, battery: 73))
        // 22:00: plugged in; 69 + 40 caps at 100.
        #expect(at(10) == ConditionChange(power: .charging, battery: 100))
        // 05:00: unplugged, out of the house; one hour on battery.
        #expect(at(17) == ConditionChange(network: .cellular, power: .battery, battery: 99))
        #expect(rows.allSatisfy { !$0.change.isEmpty })
        #expect(rows.last!.timeMicros == noon + day)
    }

    private func overlay(_ trace: String, seed: UInt64) throws -> String {
        var options = OverlayOptions()
        options.seed = seed
        let out = TextCollector()
        var sink = out
        _ = try ConditionOverlay.overlay(input: trace, to: &sink, options: options)
        return out.text
    }

    private func weekTrace(_ dir: TemporaryDirectory) throws -> String {
        var text = "time,device,app,event,result,bytes,duration_ms\n"
        for d in 0..<7 {
            for h in [8, 9, 12, 18, 21] {
                let t = 1_384_070_400 + d * 86_400 + h * 3600
                text += "\(t),d1,com.a,launch,,,\n\(t + 60),d2,com.b,launch,,,\n"
            }
        }
        return try dir.write("week.csv", text)
    }

    @Test func theSameSeedGivesTheSameBytesAndAnotherSeedOthers() throws {
        let dir = try TemporaryDirectory()
        let trace = try weekTrace(dir)
        let a = try overlay(trace, seed: 7)
        #expect(a == (try overlay(trace, seed: 7)))
        #expect(a != (try overlay(trace, seed: 8)))
        #expect(a.hasPrefix(TraceColumn.headerWithConditions + "\n"))
    }

    @Test func writesAValidTraceWithTheInputEventsAndStateRows() throws {
        let dir = try TemporaryDirectory()
        let trace = try weekTrace(dir)
        let text = try overlay(trace, seed: 3)
        let read = try readTrace(text: text)
        let launches = read.events.filter { $0.kind == .launch }
        #expect(launches.count == 70)
        let states = read.events.filter { $0.kind == .state }
        #expect(Set(states.map(\.device)) == ["d1", "d2"])
        // Each device's first state row sets all four fields; every device is charging some night.
        for device in ["d1", "d2"] {
            let own = states.filter { $0.device == device }
            #expect(own.first.map { $0.network != nil && $0.power != nil && $0.battery != nil && $0.lowPower != nil } == true)
            #expect(own.contains { $0.power == .charging })
            #expect(own.contains { $0.network == .wifi })
        }
        #expect(zip(read.events, read.events.dropFirst()).allSatisfy { $0.timeMicros <= $1.timeMicros })
    }

    @Test func refusesATraceThatAlreadyHasStateRows() throws {
        let dir = try TemporaryDirectory()
        let trace = try dir.write("s.csv", TraceColumn.headerWithConditions + "\n2013-11-10T12:00:00Z,d1,,state,,,,wifi,,,\n")
        let error = #expect(throws: TraceError.self) { _ = try overlay(trace, seed: 1) }
        #expect(error?.line == 2)
        #expect(error?.description.contains("a trace without state rows") == true)
    }
}
