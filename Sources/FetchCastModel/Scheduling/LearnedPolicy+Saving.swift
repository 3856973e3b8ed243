import FetchCastCore
import Foundation

extension LearnedPolicy {
    /// Everything the policy has learned and keeps, but the prior (other devices' state, given
    /// again when it is restored).
    private struct Saved: Codable {
        var version: Int
        var model: Data
        var apps: [Int32]
        var configuration: SchedulerConfiguration
        var mode: Mode
        var pacer: BudgetPacer
        var fetchesToday: Int
        var day: Int?
        var lastFetch: SortedPairs<Double>
        var pendingTrigger: Double?
        var nextCheck: Double?
        var retries: SortedPairs<Retry>
        var expiries: SortedPairs<Double>
        var averageRates: SortedPairs<AverageRate>
        var calibration: ValueCalibration
        var conditions: DeviceConditions?
        var habits: ConditionHabits
    }

    private static let savedVersion = 1

    /// The policy's state as bytes, to keep until the app's next start
    /// (``init(restoring:prior:)``).
    public func savedState() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return Array(try encoder.encode(Saved(
            version: Self.savedVersion, model: Data(try model.binaryEncoded()), apps: apps, configuration: configuration, mode: mode,
            pacer: pacer, fetchesToday: fetchesToday, day: day, lastFetch: SortedPairs(lastFetch), pendingTrigger: pendingTrigger,
            nextCheck: nextCheck, retries: SortedPairs(retries), expiries: SortedPairs(expiries), averageRates: SortedPairs(averageRates),
            calibration: calibration,
            conditions: conditions, habits: habits)))
    }

    /// Restores a policy from ``savedState()``.
    /// - Throws: When the bytes are not a state this version of FetchCast saved.
    public init(restoring bytes: [UInt8], prior: DevicePrior = .none) throws {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        let saved = try decoder.decode(Saved.self, from: Data(bytes))
        guard saved.version == Self.savedVersion else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "saved by another version of FetchCast"))
        }
        self.init(apps: saved.apps, model: try DeviceModel(binary: Array(saved.model)), configuration: saved.configuration, prior: prior, mode: saved.mode)
        pacer = saved.pacer
        fetchesToday = saved.fetchesToday
        day = saved.day
        lastFetch = saved.lastFetch.dictionary
        pendingTrigger = saved.pendingTrigger
        nextCheck = saved.nextCheck
        retries = saved.retries.dictionary
        expiries = saved.expiries.dictionary
        averageRates = saved.averageRates.dictionary
        calibration = saved.calibration
        conditions = saved.conditions
        habits = saved.habits
    }
}

/// A dictionary by app, encoded as (app, value) pairs in app order: the same state always
/// encodes to the same bytes (a dictionary's own order differs from instance to instance).
struct SortedPairs<Value: Codable>: Codable {
    var keys: [Int32]
    var values: [Value]

    init(_ dictionary: [Int32: Value]) {
        let sorted = dictionary.sorted { $0.key < $1.key }
        keys = sorted.map(\.key)
        values = sorted.map(\.value)
    }

    var dictionary: [Int32: Value] { Dictionary(uniqueKeysWithValues: zip(keys, values)) }
}
