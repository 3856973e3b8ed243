import Testing
@testable import FetchCastModel

struct PopulationSumsTests {
    /// Three devices with different habits, sharing some app names.
    func devices() -> [(model: DeviceModel, name: (Int32) -> String)] {
        (0..<3).map { d in
            var model = DeviceModel()
            for e in habitTrace(seed: 100 + UInt64(d), days: 21, apps: 5 + Int32(d), offset: Int32(d) * 3600) { model.observe(e) }
            let names = (0..<8).map { "app\(($0 + d) % 7)" }
            return (model: model, name: { names[Int($0)] })
        }
    }

    func sums(_ models: [(model: DeviceModel, name: (Int32) -> String)]) -> PopulationSums {
        var sums = PopulationSums(minimumPairSupport: 2)
        for (model, name) in models { sums.add(PopulationSums(model: model, name: name, minimumPairSupport: 2)) }
        return sums
    }

    @Test func theOrderDevicesAreAddedInDoesNotChangeABit() {
        let d = devices()
        let forward = sums(d).prior()
        let backward = sums(d.reversed()).prior()
        #expect(forward == backward)
        #expect(!forward.pairs.isEmpty && forward.appRates.count == 7)
    }

    @Test func leaveOneOutEqualsThePriorOfTheOthersExactly() {
        let d = devices()
        let pooled = sums(d)
        for i in d.indices {
            var apps: [Int32: String] = [:]
            for id in d[i].model.appsBySessions { apps[id] = d[i].name(id) }
            let own = PopulationSums(model: d[i].model, name: d[i].name, minimumPairSupport: 2)
            let others = Array(d[..<i] + d[(i + 1)...])
            let expected = DevicePrior(sums(others).prior(), apps: apps)
            let leftOut = pooled.devicePrior(excluding: own, apps: apps)
            #expect(leftOut.binaryEncoded() == expected.binaryEncoded())
            #expect(leftOut.binaryEncoded() != DevicePrior(pooled.prior(), apps: apps).binaryEncoded(), "the device's own habits are out")
        }
    }

    @Test func removingADeviceRestoresTheSums() {
        let d = devices()
        var pooled = sums(d)
        pooled.remove(PopulationSums(model: d[1].model, name: d[1].name, minimumPairSupport: 2))
        #expect(pooled.prior() == sums([d[0], d[2]]).prior())
        #expect(pooled.devices == 2)
    }

    @Test func aloneThereIsNoPopulation() {
        let d = devices()
        let own = PopulationSums(model: d[0].model, name: d[0].name)
        var apps: [Int32: String] = [:]
        for id in d[0].model.appsBySessions { apps[id] = d[0].name(id) }
        #expect(sums([d[0]]).devicePrior(excluding: own, apps: apps).binaryEncoded() == DevicePrior.none.binaryEncoded())
    }
}
