import Testing
@testable import FetchCastModel

struct PairWeightsTests {
    @Test func sortedAndHashedFormsAnswerAlike() throws {
        let pairs: [UInt64: Double] = [3: 0.5, 1: 2, 1 << 40: 7, 9: 0.25]
        var sorted = PairWeights(pairs)
        var hashed = PairWeights(pairs)
        hashed.add(0, to: 1)  // switches to the hashed form without changing anything
        for key: UInt64 in [0, 1, 2, 3, 9, 10, 1 << 40, .max] { #expect(sorted[key] == hashed[key]) }
        #expect(sorted.sortedPairs().map(\.key) == [1, 3, 9, 1 << 40])
        #expect(hashed.sortedPairs().map(\.key) == sorted.sortedPairs().map(\.key))
        sorted.scale(by: 0.5)
        hashed.scale(by: 0.5)
        #expect(sorted.sortedPairs().map(\.value) == hashed.sortedPairs().map(\.value))
        sorted.add(1, to: 2)
        #expect(sorted[2] == 1 && sorted[1] == 1 && sorted.count == 5)
    }

    @Test func keysOutOfOrderAreRefused() {
        #expect(PairWeights(sortedKeys: [1, 3, 2], values: [1, 1, 1]) == nil)
        #expect(PairWeights(sortedKeys: [1, 1], values: [1, 1]) == nil)
        #expect(PairWeights(sortedKeys: [1, 2], values: [1]) == nil)
    }

    @Test(arguments: [41 as UInt64, 42])
    func learningGoesOnAfterADecodeAsIfNeverStored(seed: UInt64) throws {
        let events = habitTrace(seed: seed, days: 21)
        let half = events.count / 2
        var straight = DeviceModel()
        for e in events { straight.observe(e) }
        var stored = DeviceModel()
        for e in events[..<half] { stored.observe(e) }
        var resumed = try DeviceModel(binary: stored.binaryEncoded())
        for e in events[half...] { resumed.observe(e) }
        #expect(try resumed.binaryEncoded() == straight.binaryEncoded())
        let now = straight.lastEventTime!
        #expect(resumed.strongestPairs(limit: 10, now: now, prior: .none).map(\.2) == straight.strongestPairs(limit: 10, now: now, prior: .none).map(\.2))
    }

    @Test func decodedPriorPairsMatchTheTranslation() throws {
        var model = DeviceModel()
        for e in habitTrace(seed: 7) { model.observe(e) }
        let names = (0..<6).map { "app\($0)" }
        let population = PopulationPrior.build(from: [(model: model, name: { names[Int($0)] })], minimumPairSupport: 0)
        let prior = DevicePrior(population, names: names)
        #expect(prior.pairs.count > 0)
        let decoded = try DevicePrior(binary: prior.binaryEncoded())
        #expect(decoded.binaryEncoded() == prior.binaryEncoded())
        for x in Int32(0)..<6 {
            for y in Int32(0)..<6 { #expect(decoded.pairs[DeviceModel.pairKey(x, y)] == population.pairs[names[Int(x)]]?[names[Int(y)]].flatMap { x == y ? nil : $0 }) }
        }
    }

    @Test(arguments: [0, 1, 3, 5, 100])
    func topAppsAreTheFirstOfTheFullOrder(limit: Int) {
        var model = DeviceModel()
        for e in habitTrace(seed: 3, apps: 12) { model.observe(e) }
        #expect(model.appsBySessions(limit: limit) == Array(model.appsBySessions.prefix(limit)))
    }
}
