import FetchCastModel
import FetchCastStore
import FetchCastTrace
import Foundation

/// Keeps each device's ``DeviceModel`` and the ``PopulationPrior`` in the store, up to date
/// with the events ingested: `predict` never replays history, it folds in only the events
/// added since the last call (there is no training step to remember).
///
/// Apps and devices are keyed by the store's ids (`apps.id`, `devices.id`).
public final class ModelRepository {
    let store: Store
    /// The model constants.
    public let configuration: ModelConfiguration

    static let watermarkKey = "watermark"
    static let populationKey = "population"
    static let devicePrefix = "device:"

    /// Creates a repository over a store.
    public init(store: Store, configuration: ModelConfiguration = ModelConfiguration()) {
        self.store = store
        self.configuration = configuration
    }

    /// The learned state of every device, the population prior and the names behind the ids.
    public struct Snapshot {
        public var models: [Int64: DeviceModel]
        public var population: PopulationPrior
        public var deviceNames: [Int64: String]
        public var appNames: [Int64: String]
        /// Events folded in by this refresh.
        public var eventsFolded: Int

        /// The device id of a name.
        public func device(named name: String) -> Int64? { deviceNames.first { $0.value == name }?.key }
        /// The app id of a name.
        public func app(named name: String) -> Int64? { appNames.first { $0.value == name }?.key }

        /// The prior for one device: the population without that device would be ideal; the
        /// pooled population is used, with the device's own data outweighing it as it grows.
        public func prior(for device: Int64) -> DevicePrior {
            guard let model = models[device] else { return DevicePrior(population, apps: [:]) }
            var names: [Int32: String] = [:]
            for app in model.appsBySessions { names[app] = appNames[Int64(app)] ?? "" }
            return DevicePrior(population, apps: names)
        }
    }

    /// Folds new events into the persisted models and returns them.
    ///
    /// - Complexity: O(new events + devices × apps) — independent of history already folded.
    public func refresh() throws -> Snapshot {
        let encoder = JSONEncoder()
        let decoder = JSONDecoder()
        return try store.writeTransaction {
            let watermark = try store.modelState(key: Self.watermarkKey)?.watermark ?? 0
            let last = try store.lastEventID()
            var models: [Int64: DeviceModel] = [:]
            for record in try store.modelStates(prefix: Self.devicePrefix) {
                guard let id = Int64(record.key.dropFirst(Self.devicePrefix.count)) else { continue }
                models[id] = try decoder.decode(DeviceModel.self, from: Data(record.state))
            }
            var population = try store.modelState(key: Self.populationKey)
                .map { try decoder.decode(PopulationPrior.self, from: Data($0.state)) } ?? .none
            var folded = 0
            if last > watermark {
                try store.scanEvents(afterID: watermark) { e in
                    folded += 1
                    let event = DeviceEvent(
                        time: Double(e.timeMicros) / 1_000_000, utcOffsetSeconds: e.utcOffsetSeconds,
                        app: Int32(truncatingIfNeeded: e.app), kind: e.kind, result: e.result)
                    if let device = e.device {
                        models[device, default: DeviceModel(configuration: configuration)].observe(event)
                    } else {
                        for key in models.keys { models[key]!.observe(event) }
                    }
                }
                let appNames = try store.appNames()
                population = PopulationPrior.build(from: models.keys.sorted().map { id in
                    (model: models[id]!, name: { appNames[Int64($0)] ?? "" })
                })
                var records = try models.keys.sorted().map { id in
                    Store.ModelStateRecord(key: Self.devicePrefix + String(id), watermark: last,
                                           state: Array(try encoder.encode(models[id]!)))
                }
                records.append(Store.ModelStateRecord(key: Self.populationKey, watermark: last, state: Array(try encoder.encode(population))))
                records.append(Store.ModelStateRecord(key: Self.watermarkKey, watermark: last, state: []))
                try store.saveModelStates(records)
            }
            return Snapshot(models: models, population: population, deviceNames: try store.deviceNames(),
                            appNames: try store.appNames(), eventsFolded: folded)
        }
    }
}
