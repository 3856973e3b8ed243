import FetchCastCore
import FetchCastModel
import FetchCastStore
import FetchCastTrace
import Foundation
import Testing
import FetchCastTestSupport
@testable import FetchCastPredict

/// Priors change in epochs: within one, a device's prior is the other devices as the epoch's
/// fold pooled them, whatever was folded since (its own events, other devices', a device first
/// seen later, an app it starts using); a fold that has seen the store's events grow by a
/// quarter starts a new epoch, whose priors are those of a fold from scratch.
struct PriorEpochTests {
    /// Mail at 08:0x and 20:0x, chat at 08:1x, news at 12:3x, each day of `days`.
    private static func habits(days: Range<Int>, devices: [String], apps: [String] = ["mail", "chat", "news", "mail"]) -> [String] {
        var rows: [String] = []
        for day in days {
            let date = Timestamp.format(micros: Int64(1_699_833_600 + day * 86_400) * 1_000_000, utcOffsetSeconds: 3600).prefix(10)
            for d in devices {
                for (time, app) in zip(["08:0", "08:1", "12:3", "20:0"], apps) { rows.append("\(date)T\(time)\(day % 7):00+01:00,\(d),\(app),launch,,,") }
            }
        }
        return rows.sorted()
    }

    private final class Fixture {
        let temporary: TemporaryStore
        let store: Store

        init() throws {
            temporary = try TemporaryStore()
            store = try temporary.open()
        }

        func ingest(_ rows: [String]) throws { try temporary.ingest(rows, into: store) }

        /// The prior of `device` as a new repository reads it (folding what was added).
        func prior(_ device: String) async throws -> [UInt8] {
            let snapshot = try await ModelRepository(store: store).refresh(devices: [device])
            return snapshot.prior(for: try #require(snapshot.device(named: device))).binaryEncoded()
        }

        func priors(_ devices: [String]) async throws -> [[UInt8]] {
            var priors: [[UInt8]] = []
            for device in devices { priors.append(try await prior(device)) }
            return priors
        }
    }

    @Test func withinAnEpochEveryPriorIsTheOtherDevicesAsTheEpochPooledThem() async throws {
        // 168 events; `c` reads the weather where the others read mail.
        let weatherApps = ["weather", "chat", "news", "weather"]
        let epoch = (Self.habits(days: 0..<14, devices: ["a", "b"]) + Self.habits(days: 0..<14, devices: ["c"], apps: weatherApps)).sorted()
        let f = try Fixture()
        try f.ingest(epoch)
        var first: [[UInt8]] = []
        for device in ["a", "b", "c"] { first.append(try await f.prior(device)) }
        #expect(first.allSatisfy { $0 != DevicePrior.none.binaryEncoded() })

        // Another day of `a` and of a new device `d` (8 events, under a quarter of 168): no
        // prior moves, and `d`'s is the epoch's population (it had nothing to take out).
        try f.ingest(Self.habits(days: 14..<15, devices: ["a", "d"]))
        #expect(try await f.priors(["a", "b", "c"]) == first)
        let onlyEpochAndD = try Fixture()
        try onlyEpochAndD.ingest((epoch + Self.habits(days: 14..<15, devices: ["d"])).sorted())
        #expect(try await f.prior("d") == (try await onlyEpochAndD.prior("d")))

        // `a` starts reading the weather: its prior covers it (from `c`), still without `a`'s
        // share as the epoch pooled it — the prior a store of the others' epoch events and all
        // of `a`'s gives (the same app ids: the same first rows).
        let weather = Self.habits(days: 15..<17, devices: ["a"], apps: weatherApps)
        try f.ingest(weather)
        let withWeather = try await f.prior("a")
        #expect(withWeather != first[0])
        let others = try Fixture()
        try others.ingest(
            (Self.habits(days: 0..<14, devices: ["b"]) + Self.habits(days: 0..<14, devices: ["c"], apps: weatherApps)
                + Self.habits(days: 0..<15, devices: ["a"]) + weather).sorted())
        #expect(withWeather == (try await others.prior("a")))
        #expect(try await f.priors(["b", "c"]) == Array(first[1...]))

        // Events grown by a quarter since the epoch (8 + 8 + 28 of 168): a new epoch, whose
        // priors are those of folding everything at once.
        try f.ingest(Self.habits(days: 17..<24, devices: ["b"]))
        let all = try Fixture()
        try all.ingest((epoch + Self.habits(days: 14..<15, devices: ["a", "d"]) + weather + Self.habits(days: 17..<24, devices: ["b"])).sorted())
        for device in ["a", "b", "c", "d"] {
            await #expect(try f.prior(device) == all.prior(device), "\(device)")
        }
        await #expect(try f.prior("c") != first[2])
    }

    @Test func theRuleStartsAnEpochOnTheFirstFoldOnAFoldOfEveryDeviceAndOnGrowth() {
        let epoch = ModelRepository.PriorEpoch(watermark: 1000, tag: 1, populationKey: ModelRepository.epochPopulationKey)
        #expect(ModelRepository.startsEpoch(after: nil, last: 10, complete: false, growth: 0.25))
        #expect(ModelRepository.startsEpoch(after: epoch, last: 1001, complete: true, growth: 0.25))
        #expect(!ModelRepository.startsEpoch(after: epoch, last: 1249, complete: false, growth: 0.25))
        #expect(ModelRepository.startsEpoch(after: epoch, last: 1250, complete: false, growth: 0.25))
        #expect(ModelRepository.startsEpoch(after: epoch, last: 1001, complete: false, growth: 0))
    }

    @Test func aPublishToEveryDeviceStartsAnEpoch() async throws {
        let f = try Fixture()
        try f.ingest(Self.habits(days: 0..<14, devices: ["a", "b"]))
        let before = try await f.prior("a")
        try f.ingest(["2023-11-27T09:00:00+01:00,,news,publish,,,"])
        let all = try Fixture()
        try all.ingest(Self.habits(days: 0..<14, devices: ["a", "b"]) + ["2023-11-27T09:00:00+01:00,,news,publish,,,"])
        await #expect(try f.prior("a") == all.prior("a"))
        await #expect(try f.store.modelState(key: ModelRepository.epochKey)?.watermark == f.store.lastEventID(), "the publish's fold started it")
        await #expect(try f.prior("a") == before, "(a publish says nothing of launches)")
    }
}
