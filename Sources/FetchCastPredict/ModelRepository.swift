import FetchCastCore
import Foundation
import FetchCastModel
import FetchCastStore
import FetchCastTrace

/// Keeps each device's ``DeviceModel`` and its ``DevicePrior`` in the store, up to date with
/// the events ingested: `predict` never replays history, it folds in only the events added
/// since the last call (there is no training step to remember).
///
/// Apps and devices are keyed by the store's ids (`apps.id`, `devices.id`). State is kept in
/// a compact binary form (``DeviceModel/binaryEncoded()``): one row per device, one for the
/// population's sums (``PopulationSums``, from which each device's prior is the population
/// without it), one for what was published to every device, and the watermark (the last event
/// folded, with a tag of the saved sums). A device's prior, once computed from the sums by a
/// repository that saves, is kept in a row of its own tagged with the fold and the sums it
/// came from: answering for one device then reads its two rows, and the 5 MB sums only when
/// its saved prior is missing or from an older fold.
public final class ModelRepository {
    let store: any ModelStore
    /// The model constants.
    public let configuration: ModelConfiguration

    static let watermarkKey = "watermark"
    static let devicePrefix = "device:"
    /// A device's prior as computed from the saved sums: the sums' tag (8 bytes, little-endian)
    /// then ``DevicePrior/binaryEncoded()``; the row's watermark is that of the fold.
    static let priorPrefix = "prior:"
    /// The sums of every device's contribution to the population (``PopulationSums``).
    static let populationKey = "population"
    /// Content published for every device (empty device id), kept so that a device first seen
    /// later still learns from what was published before it appeared.
    static let everyoneKey = "everyone"

    /// Names only change when events are added; kept per watermark so that repeated queries
    /// from an embedding process (a push backend) do not re-read them.
    var namesCache: Names?

    struct Names {
        var watermark: Int64
        var devices: [Int64: String]
        var apps: [Int64: String]
        /// Device ids by name, so that asking for one device costs no scan of every device.
        /// Keyed by UTF-8 bytes: `String` keys would merge canonically equivalent ids ("é"
        /// precomposed and decomposed), which the store keeps apart.
        var deviceIDs: [[UInt8]: Int64]
    }

    /// The names, read again only where they grew: a device's or app's id and name never
    /// change once stored and no row of them is deleted, so events added since the last call
    /// cost a read of the devices and apps with newer ids (none, mostly), not of all of them.
    func names() async throws -> Names {
        let last = try await store.lastEventID()
        if let cache = namesCache, cache.watermark == last { return cache }
        var names = namesCache ?? Names(watermark: 0, devices: [:], apps: [:], deviceIDs: [:])
        let newDevices = try await store.deviceNames(afterID: names.devices.keys.max() ?? 0)
        for (id, name) in newDevices {
            names.devices[id] = name
            names.deviceIDs[Array(name.utf8)] = id
        }
        await names.apps.merge(try store.appNames(afterID: names.apps.keys.max() ?? 0)) { $1 }
        names.watermark = last
        namesCache = names
        return names
    }

    /// Why the last refresh could not save what it folded (a full disk, a read-only store),
    /// `nil` when it saved or had nothing to save. The answer is the same either way; unsaved,
    /// the next call folds the same events again.
    public internal(set) var saveFailure: StoreError?

    /// Whether a refresh that finds events added since the saved fold saves the fold (taking
    /// the store's write lock). When `false` (the service's readers, whose writer folds after
    /// each ingest), it brings only the requested devices up to date, in memory, from their
    /// saved state: their models then reflect every committed event, and their priors the
    /// other devices as of the saved fold. Either way, with no valid saved fold it saves one.
    public var savesFolds = true

    /// Whether a plan saves the scheduler it caught up (for the next process, or the next
    /// reader of the store) when it read events the saved one had not seen. `predict` saves;
    /// the service's readers do not (its warm-up, ``keepSchedulersCurrent(batchSize:shouldStop:)``,
    /// saves for them, off the request path).
    public var savesSchedulers = true

    /// Whether priors computed from the epoch's sums are saved for the next call: by a
    /// repository that saves folds or schedulers (`predict`, the service's warm-up), not by the
    /// service's readers.
    var savesPriors: Bool { savesFolds || savesSchedulers }

    /// Decoded models and priors shared with the other repositories of the process (the
    /// service's readers); `nil`: every answer reads and decodes the device's saved state.
    package var cache: ModelCache?

    /// How much the store's events must grow since the prior epoch, as a share of its events,
    /// for a fold to start a new one (a quarter; 0: every fold that adds events, as before
    /// epochs). Between epochs a device's prior stays as it was, so schedulers caught up for it
    /// stay exact while other devices post events (``ModelRepository/startsEpoch(after:last:complete:growth:)``).
    package var priorEpochGrowth = 0.25

    /// Device models a fold holds in memory at once (the first fold of a large store would
    /// otherwise hold every device's model: about 400 KB each). Results do not depend on it.
    public var foldBatchSize = 256

    /// Creates a repository over a store.
    public convenience init(store: Store, configuration: ModelConfiguration = ModelConfiguration()) {
        self.init(modelStore: store, configuration: configuration)
    }

    /// Opens a repository over the store at `location`, on either engine (on PostgreSQL, an
    /// older FetchCast schema is upgraded); its connection closes when the repository is
    /// released. Its methods are asynchronous: a round trip to PostgreSQL suspends the calling
    /// task, and SQLite's reads run on the thread the task is on. One task uses a repository at a
    /// time; for plans asked from many tasks at once, `Planner(location:)` (FetchCastServe) keeps
    /// repositories of its own and runs them on threads of its own.
    /// - Throws: ``StoreError`` when the store does not exist or cannot be opened.
    public convenience init(location: StoreLocation, configuration: ModelConfiguration = ModelConfiguration()) async throws {
        await self.init(modelStore: try location.openModelStore(), configuration: configuration)
    }

    /// Creates a repository over a store of either engine.
    package init(modelStore store: any ModelStore, configuration: ModelConfiguration = ModelConfiguration()) {
        self.store = store
        self.configuration = configuration
    }

    /// The learned state of devices, their priors and the names behind the ids.
    public struct Snapshot {
        public var models: [Int64: DeviceModel]
        var priors: [Int64: DevicePrior]
        public var deviceNames: [Int64: String]
        public var appNames: [Int64: String]
        /// Events folded in by this refresh.
        public var eventsFolded: Int
        /// Device ids by name (shared with the repository's cache; may be out of step with
        /// `deviceNames` only if a caller edits that, hence the fallback).
        var deviceIDs: [[UInt8]: Int64] = [:]
        /// ``ModelRepository/priorTag(_:)`` of some of `priors` (those read from the shared cache).
        var priorTags: [Int64: UInt64] = [:]
        /// The tag of the prior epoch the priors are of (``PriorEpoch/tag``); `nil` for priors of
        /// a fold kept in memory only.
        var epochTag: UInt64?

        /// The device id of a name, matched byte for byte (ids that only look alike differ).
        public func device(named name: String) -> Int64? {
            if let id = deviceIDs[Array(name.utf8)], deviceNames[id].map({ ModelRepository.same($0, name) }) == true { return id }
            return deviceNames.first { ModelRepository.same($0.value, name) }?.key
        }
        /// The app id of a name, matched byte for byte.
        public func app(named name: String) -> Int64? { appNames.first { ModelRepository.same($0.value, name) }?.key }

        /// `" (did you mean 'X'?)"` for a device name the snapshot lacks, naming the closest one
        /// it has (``NearestName``), or `""`.
        public func didYouMean(device name: String) -> String {
            NearestName.didYouMean(name, among: deviceNames.values.sorted())
        }

        /// `" (did you mean 'X'?)"` for an app name the snapshot lacks, or `""`.
        public func didYouMean(app name: String) -> String {
            NearestName.didYouMean(name, among: appNames.values.sorted())
        }

        /// What the other devices say, translated to this device's app ids.
        public func prior(for device: Int64) -> DevicePrior { priors[device] ?? .none }

        /// Refolds a device's model from the events before an instant (`nil` for an unknown
        /// device): what a plan from inside the history must start from.
        var rewind: ((Int64, Double) async throws -> DeviceModel?)?

        /// The device's model as it was just before `time`: the stored one when it has seen
        /// nothing at or after `time`, else one folded from the store's events before `time`.
        /// - Complexity: O(1) for a time after the device's history; otherwise O(the store's
        ///   events of the device and publishes to every device), read in id order.
        /// Catches a following scheduler up with a device's events (``scheduler(of:apps:configuration:model:before:inclusive:)``).
        var catchUp: ((_ device: Int64, _ apps: [Int32], _ configuration: SchedulerConfiguration, _ model: ModelConfiguration,
                       _ prior: DevicePrior, _ priorTag: UInt64?, _ time: Double, _ inclusive: Bool) async throws -> LearnedPolicy?)?
        /// Reads a device's `state` rows and publishes to every device up to an instant.
        var readHistory: ((_ device: Int64, _ time: Double, _ body: (StoredEvent) throws -> Void) async throws -> Void)?

        /// The scheduler a plan of `device` from `time` starts from: a following
        /// ``LearnedPolicy`` for `apps`, told of the device's launches and fetches before `time`
        /// (at it too when `inclusive`), the publishes to it and to every device and the
        /// conditions its `state` rows set up to `time`, in time order, exactly as the `planned`
        /// policy's scheduler is told of them in a replay (`nil` without a store or without
        /// events).
        /// - Complexity: O(the device's events before `time` + publishes to every device), read
        ///   through the store's (device, time) index; O(the events after the last call's `time`)
        ///   when the repository asked for the same scheduler from an earlier time and no event
        ///   was added since.
        package func scheduler(
            of device: Int64, apps: [Int32], configuration: SchedulerConfiguration, model: ModelConfiguration, before time: Double,
            inclusive: Bool = false
        ) async throws -> LearnedPolicy? {
            try await catchUp?(device, apps, configuration, model, prior(for: device), priorTags[device], time, inclusive)
        }

        /// The device's conditions at `time`: each field as the latest `state` row at or before
        /// it set it; unknown without a store or without state rows.
        public func conditions(of device: Int64, at time: Double) async throws -> DeviceConditions {
            guard let readHistory else { return .unknown }
            var conditions = DeviceConditions.unknown
            try await readHistory(device, time) { e in
                if e.kind == .state, e.device != nil { conditions.apply(e.conditions) }
            }
            return conditions
        }

        public func model(of device: Int64, before time: Double) async throws -> DeviceModel? {
            guard let model = models[device] else { return nil }
            guard let seen = model.lastObservedTime, seen >= time, let rewind else { return model }
            return try await rewind(device, time)
        }
    }

    /// The following schedulers asked for last, shared with the other repositories of the
    /// process when the service sets one: a plan from a later time goes on from one instead of
    /// reading the device's history again.
    package var schedulerCache = SchedulerCache(capacityBytes: 32 << 20)

    /// Saved device models this repository decoded to answer (not found in ``cache``; for tests).
    package internal(set) var modelsDecoded = 0

    /// Plans that went on from a kept or saved scheduler instead of catching up from nothing
    /// (for tests).
    package internal(set) var schedulersReused = 0

    /// Caught-up schedulers this repository saved to the store.
    package internal(set) var schedulersSaved = 0

    /// While a warm-up batch runs, the checkpoints its catch-ups keep, saved with its plan tables
    /// in one transaction (``keepSchedulersCurrent(request:batchSize:shouldStop:)``); `nil`
    /// otherwise: each is saved in a transaction of its own.
    var pendingCheckpoints: [(checkpoint: SchedulerCheckpoint, key: String)]?

    /// The hash in every plan table's key (``planTableKey(device:)``): the same constants for
    /// every device, so hashed once per repository rather than at every plan answered ahead.
    lazy var planTableHash: String = {
        let request = PlanTable.request
        return String(
            storageHash(apps: [Int32(request.topApps)], configuration: SchedulerConfiguration(budget: request.budget), model: configuration),
            radix: 16)
    }()

    /// The constants' JSON as ``storageHash(apps:configuration:model:)`` hashes it, by value:
    /// encoded once per repository (every device is planned with the same few).
    var constantsJSON: [Constants: [UInt8]?] = [:]

    struct Constants: Hashable {
        var configuration: SchedulerConfiguration
        var model: ModelConfiguration
    }

    /// The prior epoch's population sums, indexed, kept while the epoch stays.
    var epochPopulationCache: (tag: UInt64, population: PopulationIndex)?

    /// The saved population sums with every pair (what a fold updates), kept likewise.
    var sumsCache: (watermark: Int64, sums: PopulationSums)?
}
