import FetchCastModel
import Testing

struct BinaryCodingTests {
    @Test(arguments: [41 as UInt64, 42, 43])
    func aModelRoundTripsByteForByte(seed: UInt64) throws {
        var model = DeviceModel()
        for e in habitTrace(seed: seed) { model.observe(e) }
        model.observe(DeviceEvent(time: model.lastEventTime! + 60, app: 1, kind: .fetch, result: .noData))
        model.observe(DeviceEvent(time: model.lastEventTime! + 120, app: 9, kind: .publish))
        let bytes = try model.binaryEncoded()
        let decoded = try DeviceModel(binary: bytes)
        #expect(try decoded.binaryEncoded() == bytes)
        let now = model.lastEventTime!
        for app in Int32(0)..<6 {
            #expect(decoded.sessionRates(app: app, now: now, prior: .none) == model.sessionRates(app: app, now: now, prior: .none))
            #expect(decoded.responseProbability(app: app, at: now + 1, after: (app + 1) % 6, triggerTime: now, now: now, prior: .none)
                == model.responseProbability(app: app, at: now + 1, after: (app + 1) % 6, triggerTime: now, now: now, prior: .none))
        }
    }

    @Test func damagedBytesAreRejected() throws {
        var model = DeviceModel()
        for e in habitTrace(seed: 5, days: 2) { model.observe(e) }
        let bytes = try model.binaryEncoded()
        #expect(throws: BinaryReader.Malformed.self) { try DeviceModel(binary: Array(bytes.dropLast(3))) }
        #expect(throws: BinaryReader.Malformed.self) { try DeviceModel(binary: [1, 2, 3]) }
        #expect(throws: BinaryReader.Malformed.self) { try DeviceModel(binary: bytes + [0]) }
    }
}
