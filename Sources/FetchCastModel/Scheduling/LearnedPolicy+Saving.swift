import FetchCastCore
import Foundation
import Synchronization

extension LearnedPolicy {
    /// The first bytes of a saved state, then its format version.
    private static let savedMagic = Array("FCLP".utf8)
    private static let savedVersion = 10

    /// The policy's state as bytes, to keep until the app's next start
    /// (``init(restoring:prior:)``): everything it has learned and keeps, but the prior (other
    /// devices' state, given again when it is restored), in a compact binary form (format 10,
    /// whose configuration says whether it looks before pickups,
    /// ``SchedulerConfiguration/looksBeforePickups``; 9 kept no look before a pickup once the
    /// silence had lasted ``pickupLongestSilence``, 8 could, 7 had no
    /// ``SchedulerConfiguration/slackAnticipationShare``, 6 had no looks before the next pickup nor the model's pickup log, 5
    /// no looks ahead deferred from a metered network on battery, 4 no looks ahead that the constraints held, 3 no
    /// looks ahead of habits, 2 no outcome lines, and fetchcast 0.5.0 wrote JSON: a restore
    /// refuses them like any state it cannot read). The same state always gives the same bytes.
    public func savedState() throws -> [UInt8] {
        var w = BinaryWriter()
        w.bytes += Self.savedMagic
        w.int(Self.savedVersion)
        w.blob(try model.binaryEncoded())
        w.int(apps.count)
        for app in apps { w.int32(app) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        w.blob(Array(try encoder.encode(configuration)))  // small, and every constant it gains comes along
        w.bool(mode == .following)
        pacer.write(to: &w)
        w.int(fetchesToday)
        w.optionalInt(day)
        w.times(lastFetch)
        w.optionalDouble(pendingTrigger)
        w.optionalDouble(nextCheck)
        w.int(retries.count)
        for app in retries.keys.sorted() { w.int32(app); w.double(retries[app]!.at); w.int(retries[app]!.failures) }
        w.times(expiries)
        w.int(averageRates.count)
        for app in averageRates.keys.sorted() { w.int32(app); w.double(averageRates[app]!.at); w.double(averageRates[app]!.rate) }
        calibration.write(to: &w)
        w.bool(conditions != nil)
        if let conditions { w.conditions(conditions) }
        habits.write(to: &w)
        w.times(anticipations)
        w.times(heldLooks)
        w.times(deferredLooks)
        w.optionalDouble(pickupLook)
        w.optionalDouble(lastPickupLook)
        return w.bytes
    }

    /// Restores a policy from ``savedState()``.
    /// - Throws: When the bytes are not a state this version of FetchCast saved (damaged, or of
    ///   another format).
    public init(restoring bytes: [UInt8], prior: DevicePrior = .none) throws {
        self = try bytes.withUnsafeBytes { raw in
            var r = BinaryReader(raw)
            guard Array(try r.slice(Self.savedMagic.count)) == Self.savedMagic, try r.int() == Self.savedVersion else {
                throw BinaryReader.Malformed()
            }
            let model = try DeviceModel(binary: try r.blob())
            var apps: [Int32] = []
            for _ in 0..<(try r.count()) { apps.append(try r.int32()) }
            let configuration = try Self.configuration(decoding: try r.blob())
            var policy = LearnedPolicy(
                apps: apps, model: model, configuration: configuration, prior: prior, mode: try r.bool() ? .following : .live)
            policy.pacer = try BudgetPacer(reading: &r)
            policy.fetchesToday = try r.int()
            policy.day = try r.optionalInt()
            policy.lastFetch = try r.times()
            policy.pendingTrigger = try r.optionalDouble()
            policy.nextCheck = try r.optionalDouble()
            for _ in 0..<(try r.count()) { policy.retries[try r.int32()] = Retry(at: try r.double(), failures: try r.int()) }
            policy.expiries = try r.times()
            for _ in 0..<(try r.count()) { policy.averageRates[try r.int32()] = AverageRate(at: try r.double(), rate: try r.double()) }
            policy.calibration = try ValueCalibration(reading: &r)
            policy.conditions = try r.bool() ? try r.conditions() : nil
            policy.habits = try ConditionHabits(reading: &r)
            policy.anticipations = try r.times()
            policy.heldLooks = try r.times()
            policy.deferredLooks = try r.times()
            policy.pickupLook = try r.optionalDouble()
            policy.lastPickupLook = try r.optionalDouble()
            guard r.offset == raw.count else { throw BinaryReader.Malformed() }
            return policy
        }
    }
}

extension LearnedPolicy {
    /// The configuration last decoded from a saved state, with its JSON: states restored one
    /// after another (a server restoring many devices' schedulers) nearly all carry the same
    /// one, and decoding it was a tenth of a restore.
    private static let lastConfiguration = Mutex<(json: [UInt8], configuration: SchedulerConfiguration)?>(nil)

    /// The configuration whose JSON a saved state holds.
    static func configuration(decoding json: UnsafeRawBufferPointer) throws -> SchedulerConfiguration {
        if let known = lastConfiguration.withLock({ $0.flatMap { $0.json.elementsEqual(json) ? $0.configuration : nil } }) {
            return known
        }
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        let configuration = try decoder.decode(SchedulerConfiguration.self, from: Data(json))
        lastConfiguration.withLock { $0 = (Array(json), configuration) }
        return configuration
    }
}

extension BinaryWriter {
    /// Times by app, in app order.
    package mutating func times(_ t: [Int32: Double]) {
        int(t.count)
        for app in t.keys.sorted() { int32(app); double(t[app]!) }
    }

    /// Each field, present or not (a raw value, a byte).
    package mutating func conditions(_ c: DeviceConditions) {
        for raw in [c.network?.rawValue, c.power?.rawValue, c.battery, c.lowPower.map { $0 ? 1 : 0 }] {
            bool(raw != nil)
            if let raw { bytes.append(raw) }
        }
    }
}

extension BinaryReader {
    package mutating func times() throws -> [Int32: Double] {
        var t: [Int32: Double] = [:]
        for _ in 0..<(try count()) { t[try int32()] = try double() }
        return t
    }

    package mutating func conditions() throws -> DeviceConditions {
        func field() throws -> UInt8? { try bool() ? try slice(1)[0] : nil }
        var c = DeviceConditions.unknown
        if let n = try field() { guard let v = NetworkCondition(rawValue: n) else { throw Malformed() }; c.network = v }
        if let p = try field() { guard let v = PowerCondition(rawValue: p) else { throw Malformed() }; c.power = v }
        if let b = try field() { guard b <= 100 else { throw Malformed() }; c.battery = b }
        if let l = try field() { c.lowPower = l != 0 }
        return c
    }
}
