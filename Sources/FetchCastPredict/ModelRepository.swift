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
    func names() throws -> Names {
        let last = try store.lastEventID()
        if let cache = namesCache, cache.watermark == last { return cache }
        var names = namesCache ?? Names(watermark: 0, devices: [:], apps: [:], deviceIDs: [:])
        let newDevices = try store.deviceNames(afterID: names.devices.keys.max() ?? 0)
        for (id, name) in newDevices {
            names.devices[id] = name
            names.deviceIDs[Array(name.utf8)] = id
        }
        names.apps.merge(try store.appNames(afterID: names.apps.keys.max() ?? 0)) { $1 }
        names.watermark = last
        namesCache = names
        return names
    }

    /// Why the last refresh could not save what it folded (a full disk, a read-only store),
    /// `nil` when it saved or had nothing to save. The answer is the same either way; unsaved,
    /// the next call folds the same events again.
    public private(set) var saveFailure: StoreError?

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
        var rewind: ((Int64, Double) throws -> DeviceModel?)?

        /// The device's model as it was just before `time`: the stored one when it has seen
        /// nothing at or after `time`, else one folded from the store's events before `time`.
        /// - Complexity: O(1) for a time after the device's history; otherwise O(the store's
        ///   events of the device and publishes to every device), read in id order.
        /// Catches a following scheduler up with a device's events (``scheduler(of:apps:configuration:model:before:inclusive:)``).
        var catchUp: ((_ device: Int64, _ apps: [Int32], _ configuration: SchedulerConfiguration, _ model: ModelConfiguration,
                       _ prior: DevicePrior, _ priorTag: UInt64?, _ time: Double, _ inclusive: Bool) throws -> LearnedPolicy?)?
        /// Reads a device's `state` rows and publishes to every device up to an instant.
        var readHistory: ((_ device: Int64, _ time: Double, _ body: (StoredEvent) throws -> Void) throws -> Void)?

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
        ) throws -> LearnedPolicy? {
            try catchUp?(device, apps, configuration, model, prior(for: device), priorTags[device], time, inclusive)
        }

        /// The device's conditions at `time`: each field as the latest `state` row at or before
        /// it set it; unknown without a store or without state rows.
        public func conditions(of device: Int64, at time: Double) throws -> DeviceConditions {
            guard let readHistory else { return .unknown }
            var conditions = DeviceConditions.unknown
            try readHistory(device, time) { e in
                if e.kind == .state, e.device != nil { conditions.apply(e.conditions) }
            }
            return conditions
        }

        public func model(of device: Int64, before time: Double) throws -> DeviceModel? {
            guard let model = models[device] else { return nil }
            guard let seen = model.lastObservedTime, seen >= time, let rewind else { return model }
            return try rewind(device, time)
        }
    }

    /// The model of `device` folded from the store's events strictly before `time`, exactly as
    /// the fold would have left it then (publishes to every device included, content adopted
    /// from them when the device first appears).
    func model(of device: Int64, before time: Double) throws -> DeviceModel? {
        let limit = Int64((time * 1_000_000).rounded(.up))
        var learner = FleetLearner<Int64>(configuration: configuration)
        try store.readTransaction {
            try forEachEvent(afterID: 0, devices: device...device) { e in
                // State rows describe the device, not its use: the model never sees them.
                guard e.timeMicros < limit, e.kind != .state else { return }
                learner.observe(Self.event(e), device: Self.device(of: e))
            }
        }
        return learner.models[device]
    }

    /// What ``caughtUp(_:apps:configuration:model:prior:time:inclusive:)`` keeps per scheduler.
    struct SchedulerKey: Hashable {
        var device: Int64
        var apps: [Int32]
        var configuration: SchedulerConfiguration
        var model: ModelConfiguration
    }

    /// A following scheduler told of every event before `limitMicros` as of `watermark`.
    struct CaughtUp: Sendable {
        var scheduler: LearnedPolicy
        var conditions: DeviceConditions
        var limitMicros: Int64
        var watermark: Int64
        var seen: Bool
    }

    /// The following schedulers asked for last, shared with the other repositories of the
    /// process when the service sets one: a plan from a later time goes on from one instead of
    /// reading the device's history again.
    package var schedulerCache = SchedulerCache(capacityBytes: 32 << 20)

    /// Saved device models this repository decoded to answer (not found in ``cache``; for tests).
    package private(set) var modelsDecoded = 0

    /// Plans that went on from a kept or saved scheduler instead of catching up from nothing
    /// (for tests).
    package private(set) var schedulersReused = 0

    /// Caught-up schedulers this repository saved to the store.
    package internal(set) var schedulersSaved = 0

    /// While a warm-up batch runs, the checkpoints its catch-ups keep, saved with its plan tables
    /// in one transaction (``keepSchedulersCurrent(request:batchSize:shouldStop:)``); `nil`
    /// otherwise: each is saved in a transaction of its own.
    var pendingCheckpoints: [(checkpoint: SchedulerCheckpoint, key: String)]?

    /// A tag of a prior: a 64-bit hash of ``DevicePrior/binaryEncoded()``. A caught-up scheduler
    /// is only reused with a prior of the same tag.
    static func priorTag(_ prior: DevicePrior) -> UInt64 { sumsTag(prior.binaryEncoded()) }

    /// Whether a scheduler caught up as of `watermark` with the events before `limitMicros` is
    /// still exactly what catching up from nothing would give, the store being at `last`: no
    /// event of `device` (nor publish to every device) added since was before `limitMicros`.
    /// Events of other devices do not matter (the prior is checked on its own).
    private func stillCaughtUp(_ device: Int64, watermark: Int64, limitMicros: Int64, last: Int64) throws -> Bool {
        if watermark == last { return true }
        guard watermark < last else { return false }
        return try !store.hasEvents(ofDevice: device, afterID: watermark, beforeMicros: limitMicros)
    }

    /// A following scheduler for `apps` of `device`, told of the device's events before `time`
    /// (at it too when `inclusive`; otherwise only the publishes and `state` rows at it, which a
    /// replay delivers before its looks at that instant) in replay order (``InstantOrder``);
    /// `nil` when there are none. Goes on from a kept or saved scheduler (``SchedulerCheckpoint``)
    /// of the same device, apps, constants and prior when one is still caught up
    /// (``stillCaughtUp(_:watermark:limitMicros:last:)``) and no later than `time`.
    func caughtUp(
        _ device: Int64, apps: [Int32], configuration: SchedulerConfiguration, model: ModelConfiguration, prior: DevicePrior,
        priorTag knownTag: UInt64? = nil, epochTag: UInt64? = nil, time: Double, inclusive: Bool
    ) throws -> LearnedPolicy? {
        let micros = time * 1_000_000
        let limit = inclusive ? Int64(micros.rounded(.down)) + 1 : Int64(micros.rounded(.up))
        let key = SchedulerKey(device: device, apps: apps, configuration: configuration, model: model)
        let tag = knownTag ?? Self.priorTag(prior)
        var toSave: CaughtUp?
        defer { if let toSave { save(toSave, key: key, priorTag: tag, epochTag: epochTag) } }
        return try store.readTransaction {
            let watermark = try store.lastEventID()
            func usable(limitMicros: Int64, watermark keptWatermark: Int64, tag keptTag: UInt64?) throws -> Bool {
                guard limitMicros <= limit else { return false }
                if keptTag == tag { return try stillCaughtUp(device, watermark: keptWatermark, limitMicros: limitMicros, last: watermark) }
                // Saved without a prior tag (an older fetchcast): only as of this very store.
                return keptTag == nil && keptWatermark == watermark
            }
            let cached = schedulerCache.entry(key)
            var state: CaughtUp
            // Whether the store already holds this scheduler as far as it is caught up (then
            // only newly told events make it worth saving again).
            var storedAlready = false
            // One kept in memory only within the epoch it was caught up in: a `forget` starts a
            // new epoch (``ForgetMark``), and a device's prior may come out the same after it
            // while its history did not.
            if let kept = cached?.caughtUp, epochTag != nil, cached?.epochTag == epochTag,
               try usable(limitMicros: kept.limitMicros, watermark: kept.watermark, tag: cached?.priorTag) {
                state = kept
                schedulersReused += 1
            } else if let saved = saved(key), try usable(limitMicros: saved.limitMicros, watermark: saved.watermark, tag: saved.priorTag),
                      let scheduler = try? LearnedPolicy(restoring: saved.scheduler, prior: prior) {
                // Restored (the costly part) only once it is known to be usable.
                state = CaughtUp(
                    scheduler: scheduler, conditions: saved.conditions, limitMicros: saved.limitMicros, watermark: saved.watermark,
                    seen: saved.seen)
                storedAlready = true
                schedulersReused += 1
            } else {
                state = CaughtUp(
                    scheduler: LearnedPolicy(
                        apps: apps, model: DeviceModel(configuration: model), configuration: configuration, prior: prior, mode: .following),
                    conditions: .unknown, limitMicros: .min, watermark: watermark, seen: false)
            }
            var told = 0
            func tell(_ e: StoredEvent) throws(WorkStopped) {
                // A request's deadline ends a long catch-up (the cache keeps what it had).
                if told & 4095 == 4095 { try WorkDeadline.checkCurrent() }
                told += 1
                state.seen = true
                let t = Double(e.timeMicros) / 1_000_000
                if e.kind == .state {
                    state.conditions.apply(e.conditions)
                    state.scheduler.observeConditions(state.conditions, at: t, utcOffsetSeconds: e.utcOffsetSeconds)
                } else {
                    state.scheduler.observe(Self.event(e))
                }
            }
            try forEachHistoryEvent(ofDevice: device, fromMicros: state.limitMicros, beforeMicros: limit, tell)
            let advanced = state.limitMicros != limit || state.watermark != watermark
            state.limitMicros = limit
            state.watermark = watermark
            // A kept scheduler may or may not be in the store (another process, an earlier
            // save): saved again when it moved; a restored one only when it read new events.
            if advanced, !storedAlready || told > 0 { toSave = state }
            if advanced || cached == nil || cached?.epochTag != epochTag { schedulerCache.keep(state, priorTag: tag, epochTag: epochTag, for: key) }
            if !inclusive, micros == micros.rounded() {
                // The events at `time` that come before the looks at it.
                try forEachHistoryEvent(ofDevice: device, fromMicros: limit, beforeMicros: limit + 1) { e in
                    if Self.step(of: e) < .looks { try tell(e) }
                }
            }
            return state.seen ? state.scheduler : nil
        }
    }

    /// The start of every saved scheduler's key.
    static let schedulerPrefix = "scheduler:"

    /// The store's key of a caught-up scheduler: the device and a hash of what it plans for.
    /// - Complexity: O(apps) once the repository has encoded the same constants.
    func storageKey(_ key: SchedulerKey) -> String {
        Self.schedulerPrefix + "\(key.device):" + String(storageHash(apps: key.apps, configuration: key.configuration, model: key.model), radix: 16)
    }

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
    private var constantsJSON: [Constants: [UInt8]?] = [:]

    private struct Constants: Hashable {
        var configuration: SchedulerConfiguration
        var model: ModelConfiguration
    }

    /// FNV-1a of the sorted-key JSON of what a scheduler plans for,
    /// `{"apps":[…],"configuration":{…},"model":{…}}` (as `JSONEncoder` writes that value with
    /// sorted keys: `SchedulerKeyTests` checks it), its constants' part encoded once.
    func storageHash(apps: [Int32], configuration: SchedulerConfiguration, model: ModelConfiguration) -> UInt64 {
        let constants = Constants(configuration: configuration, model: model)
        let json: [UInt8]?
        if let known = constantsJSON[constants] {
            json = known
        } else {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            json = (try? encoder.encode(configuration)).flatMap { c in (try? encoder.encode(model)).map { m in
                Array(#","configuration":"#.utf8) + c + Array(#","model":"#.utf8) + m + [UInt8(ascii: "}")]
            } }
            if constantsJSON.count >= 16 { constantsJSON.removeAll() }
            constantsJSON[constants] = json
        }
        var hash = StableHash()
        // What failed to encode hashed nothing, as `(try? encoder.encode(…)) ?? Data()` did.
        guard let json else { return hash.value }
        hash.add(#"{"apps":["#.utf8)
        for (i, app) in apps.enumerated() {
            if i > 0 { hash.add(UInt8(ascii: ",")) }
            hash.add(String(app).utf8)
        }
        hash.add(UInt8(ascii: "]"))
        hash.add(json)
        return hash.value
    }

    /// Where caught-up schedulers are kept for the next process (``SchedulerCheckpoints``):
    /// the store's model state.
    var checkpoints: any SchedulerCheckpoints { StoreSchedulerCheckpoints(store: store) }

    /// A caught-up scheduler saved by an earlier process (`predict` runs one process per call),
    /// its scheduler's state not yet restored; `nil` when none is saved or it cannot be read.
    private func saved(_ key: SchedulerKey) -> SchedulerCheckpoint? {
        (try? checkpoints.checkpoint(key: storageKey(key))) ?? nil
    }

    /// Saves a caught-up scheduler for the next process, when this repository saves its folds
    /// and the store's prior epoch is still the one it was caught up in (after a `forget`, it
    /// may hold forgotten events); a failure only costs the next process the catching up.
    private func save(_ state: CaughtUp, key: SchedulerKey, priorTag: UInt64, epochTag: UInt64?) {
        guard savesSchedulers, let bytes = try? state.scheduler.savedState() else { return }
        let checkpoint = SchedulerCheckpoint(
            conditions: state.conditions, limitMicros: state.limitMicros, watermark: state.watermark, seen: state.seen,
            priorTag: priorTag, scheduler: bytes)
        if pendingCheckpoints != nil {
            pendingCheckpoints?.append((checkpoint, storageKey(key)))
            return
        }
        do {
            let saved = try store.writeTransaction {
                guard try epochIsCurrent(epochTag) else { return false }
                try checkpoints.save([(checkpoint, storageKey(key))])
                return true
            }
            if saved { schedulersSaved += 1 }
        } catch {}
    }

    /// Whether the store's prior epoch is the one tagged `tag` (`nil`: a fold kept in memory only,
    /// never current).
    func epochIsCurrent(_ tag: UInt64?) throws -> Bool {
        guard let tag else { return false }
        return try priorEpoch(fold: try savedFold())?.tag == tag
    }

    /// A stored event as the model sees it.
    static func event(_ e: StoredEvent) -> DeviceEvent {
        DeviceEvent(
            time: Double(e.timeMicros) / 1_000_000, utcOffsetSeconds: e.utcOffsetSeconds,
            app: Int32(truncatingIfNeeded: e.app), kind: e.kind, result: e.result)
    }

    /// Folds new events into the persisted models and returns the state of `devices` (every
    /// device when `nil`).
    ///
    /// - Complexity: O(new events + changed devices × state) when events were added since the
    ///   last call (every device's state when one of them is a publish to every device);
    ///   otherwise O(size of the requested devices' state).
    public func refresh(devices requested: DeviceIDs? = nil) throws -> Snapshot {
        let names = try names()
        return try refresh(ids: requested.map { Set($0.utf8.compactMap { names.deviceIDs[$0] }) })
    }

    /// ``refresh(devices:)`` for device ids (every device when `nil`).
    func refresh(ids wanted: Set<Int64>?) throws -> Snapshot {
        saveFailure = nil
        var names = try names()
        var state: ([Int64: DeviceModel], [Int64: DevicePrior])?
        var priorsToSave: [Store.ModelStateRecord] = []
        // ``priorTag(_:)`` of priors that came with one (from the shared cache), beside `state`.
        var priorTags: [Int64: UInt64] = [:]
        var epochTag: UInt64?
        var folded = 0
        // The common case reads: one snapshot, no write lock (so `predict` answers while an
        // ingest runs). When events were added since the saved fold, a repository that does not
        // save folds brings only the requested devices up to date, in memory; one that does (or
        // any, when there is no valid saved fold) takes the write lock and folds what changed
        // (re-checking the watermark under the lock).
        try store.readTransaction {
            names = try self.names()
            let ids = (wanted.map(Array.init) ?? Array(names.devices.keys)).sorted()
            let last = try store.lastEventID()
            if last == 0 {  // no events: nothing to fold
                state = ([:], [:])
                return
            }
            guard let saved = try savedFold() else { return }
            if saved.watermark == last {
                if let loaded = try load(ids, fold: saved, appNames: names.apps) {
                    state = loaded.state
                    priorsToSave = loaded.priorsToSave
                    priorTags = loaded.priorTags
                    epochTag = loaded.epochTag
                }
            } else if !savesFolds, saved.watermark < last {
                guard let epoch = try priorEpoch(fold: saved) else { return }
                // Devices with no event since the saved fold (nor publish to every device) are
                // as saved, read like any saved device (from the cache when it has them); the
                // others are brought up to date in memory.
                var unchanged: [Int64] = [], changed: [Int64] = []
                for id in ids {
                    if try store.hasEvents(ofDevice: id, afterID: saved.watermark, beforeMicros: .max) { changed.append(id) } else { unchanged.append(id) }
                }
                guard let loaded = try load(unchanged, fold: saved, appNames: names.apps),
                      let current = try foldInMemory(changed, after: saved.watermark, epoch: epoch, appNames: names.apps)
                else { return }
                let (models, priors) = loaded.state
                state = (models.merging(current.state.0) { $1 }, priors.merging(current.state.1) { $1 })
                priorTags = loaded.priorTags
                epochTag = epoch.tag
                folded = current.events
            }
        }
        // Priors computed from the epoch's sums are saved for the next call, if their epoch is
        // still the saved one (else they are of no use); a store that cannot take them (read
        // only, full) is no error: the next call computes them again.
        if !priorsToSave.isEmpty, savesPriors, let epochWatermark = priorsToSave.first.map({ $0.watermark }) {
            do {
                try store.writeTransaction {
                    guard let current = try priorEpoch(fold: try savedFold()), current.watermark == epochWatermark else { return }
                    try store.saveModelStates(priorsToSave)
                }
            } catch let error as StoreError where error.isWriteFailure {}
        }
        if state == nil {
            func foldNewEvents(persist: Bool) throws {
                names = try self.names()
                let ids = (wanted.map(Array.init) ?? Array(names.devices.keys)).sorted()
                let watermark = try store.modelState(key: Self.watermarkKey)?.watermark ?? 0
                let last = try store.lastEventID()
                let fromScratch = watermark >= last  // damaged state, or events forgotten
                let fold = try self.fold(after: fromScratch ? 0 : watermark, upTo: last, deviceIDs: Array(names.devices.keys),
                                         appNames: names.apps, wanted: wanted, persist: persist)
                folded = fold.events
                var models: [Int64: DeviceModel] = [:]
                var priors: [Int64: DevicePrior] = [:]
                var records: [Store.ModelStateRecord] = []
                // Unsaved (a store that cannot take the fold), a fold that starts an epoch is
                // its own; within the epoch, the changed devices' saved models are still those
                // the epoch pooled, the rest are unchanged.
                let epoch = persist || !fold.startsEpoch ? try priorEpoch(fold: try savedFold()) : nil
                epochTag = epoch?.tag
                for id in ids {
                    // Devices the fold did not change are as saved.
                    guard let model = try fold.models[id] ?? (fold.complete ? nil : loadModel(id)) else { continue }
                    models[id] = model
                    if let epoch {
                        let saved = !persist && fold.models[id] != nil ? try loadModel(id) : model
                        guard let (prior, record) = try epochPrior(of: id, model: model, saved: saved, epoch: epoch, appNames: names.apps)
                        else { throw StoreError(path: store.path, message: "the saved population of the prior epoch is damaged; delete the store's model_state rows to fold again from the events") }
                        priors[id] = prior
                        if persist, let record { records.append(record) }
                    } else {
                        priors[id] = Self.prior(of: model, pooledAs: model, in: fold.population, appNames: names.apps)
                    }
                }
                if persist { try store.saveModelStates(records) }
                state = (models, priors)
            }
            do {
                try store.writeTransaction {
                    // Another process may have folded while this one waited for the lock.
                    if let saved = try savedFold(), saved.watermark == (try store.lastEventID()) {
                        names = try self.names()
                        let ids = (wanted.map(Array.init) ?? Array(names.devices.keys)).sorted()
                        if let loaded = try load(ids, fold: saved, appNames: names.apps) {
                            state = loaded.state
                            priorTags = loaded.priorTags
                            epochTag = loaded.epochTag
                            try store.saveModelStates(loaded.priorsToSave)
                            return
                        }
                    }
                    try foldNewEvents(persist: true)
                }
            } catch let error as StoreError where error.isWriteFailure {
                // The store cannot take the folded state (full disk, read-only file): answer
                // from the same fold, kept in memory only (the transaction rolled back).
                try store.readTransaction { try foldNewEvents(persist: false) }
                saveFailure = error
            }
        }
        let (models, priors) = state ?? ([:], [:])
        return Snapshot(models: models, priors: priors, deviceNames: names.devices, appNames: names.apps, eventsFolded: folded,
                        deviceIDs: names.deviceIDs, priorTags: priorTags, epochTag: epochTag, rewind: { [self] in try model(of: $0, before: $1) },
                        catchUp: { [self] in
                            try caughtUp($0, apps: $1, configuration: $2, model: $3, prior: $4, priorTag: $5, epochTag: epochTag, time: $6, inclusive: $7)
                        },
                        readHistory: { [self] device, time, body in
                            let limit = Int64((time * 1_000_000).rounded(.down)) + 1
                            try store.readTransaction { try forEachHistoryEvent(ofDevice: device, beforeMicros: limit, body) }
                        })
    }

    /// Brings the model up to date, then calls `body` with snapshots of `device` alone, or of
    /// every device in name order, `batchSize` devices at a time: what `predict` and `export` do
    /// for a whole store without holding every device's state at once.
    ///
    /// A snapshot names every device and app; only its batch's models are loaded. Events
    /// ingested while the batches run are folded in by the next batch's refresh.
    /// - Complexity: memory O(`batchSize` × state of a device), besides the fold's own bound.
    public func forEachBatch(device: String?, batchSize: Int = 256, _ body: (Snapshot) throws -> Void) throws {
        if let device {
            try body(try refresh(devices: [device]))
            return
        }
        // Batches of ids, not of names: a set of names would merge canonically equivalent ids.
        let ids = try refresh(ids: []).deviceNames.sorted { Self.precedes($0.value, $1.value) }.map(\.key)
        var start = 0
        repeat {
            let batch = ids[start..<min(ids.count, start + max(1, batchSize))]
            try body(try refresh(ids: Set(batch)))
            start += max(1, batchSize)
        } while start < ids.count
    }

    /// Whether two ids are the same bytes (`==` on `String` also equates canonically
    /// equivalent text, which the store keeps apart).
    static func same(_ a: String, _ b: String) -> Bool { a.utf8.elementsEqual(b.utf8) }

    /// Byte order of ids (UTF-8), as SQLite sorts them: total and deterministic, unlike `<` on
    /// `String`, under which canonically equivalent ids tie.
    static func precedes(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }

    /// The saved fold: its watermark (that of the whole saved state) and the tag of its sums
    /// (`nil` for a store saved before priors were kept: then none is read nor saved); `nil`
    /// when there is no saved fold.
    func savedFold() throws -> SavedFold? {
        try store.withModelState(key: Self.watermarkKey) { watermark, bytes in
            guard watermark > 0 else { return nil }
            return SavedFold(watermark: watermark, tag: bytes.count == 8 ? bytes.loadUnaligned(as: UInt64.self).littleEndian : nil)
        } ?? nil
    }

    /// The watermark of a saved fold and the tag of its sums.
    struct SavedFold {
        var watermark: Int64
        var tag: UInt64?
    }

    /// A tag of saved sums: a 64-bit hash of their bytes (what a saved prior must match).
    /// - Complexity: O(bytes), about a millisecond for the development trace's 5 MB.
    static func sumsTag(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes { sumsTag($0) }
    }

    /// ``sumsTag(_:)`` of bytes in place.
    static func sumsTag(_ raw: UnsafeRawBufferPointer) -> UInt64 {
        StableHash.ofWords(raw)
    }

    /// A device's prior as saved: the key it is kept under (``priorKey(epoch:apps:)``), then the prior.
    static func priorRecord(_ prior: DevicePrior, of id: Int64, watermark: Int64, tag: UInt64) -> Store.ModelStateRecord {
        var state = withUnsafeBytes(of: tag.littleEndian, Array.init)
        state += prior.binaryEncoded()
        return Store.ModelStateRecord(key: Self.priorPrefix + String(id), watermark: watermark, state: state)
    }

    /// The prior epoch's population sums, indexed, kept while the epoch stays.
    var epochPopulationCache: (tag: UInt64, population: PopulationIndex)?

    /// The saved population sums with every pair (what a fold updates), kept likewise.
    private var sumsCache: (watermark: Int64, sums: PopulationSums)?

    /// The population sums saved by the fold at `watermark`, with every pair; `nil` when
    /// missing or damaged.
    private func savedSums(watermark: Int64) throws -> PopulationSums? {
        if let cached = sumsCache, cached.watermark == watermark { return cached.sums }
        let decoded = try store.withModelState(key: Self.populationKey) { saved, bytes in
            saved == watermark ? try? PopulationSums(binary: bytes) : nil
        }
        return decoded ?? nil
    }

    /// The prior of a device: what the other devices say, the population without the device's
    /// own contribution (that of `pooled`, its model as pooled in `population`; none when it is
    /// not there yet), for the apps of `model`.
    /// - Complexity: O(the device's apps × 168 + apps² + pairs).
    static func prior(of model: DeviceModel, pooledAs pooled: DeviceModel?, in population: PopulationIndex, appNames: [Int64: String])
        -> DevicePrior
    {
        let name: (Int32) -> String = { appNames[Int64($0)] ?? "" }
        var apps: [Int32: String] = [:]
        for app in model.appsBySessions { apps[app] = name(app) }
        return population.devicePrior(excluding: pooled, name: name, apps: apps)
    }

    /// The saved state of these devices with their priors (from ``cache`` when it has them,
    /// else the saved prior of this epoch, else computed from the epoch's sums, read only then);
    /// `nil` when any of it is damaged. `priorsToSave`: the priors computed, as rows to save
    /// when this repository saves.
    private func load(_ ids: [Int64], fold: SavedFold, appNames: [Int64: String]) throws
        -> (state: ([Int64: DeviceModel], [Int64: DevicePrior]), priorsToSave: [Store.ModelStateRecord], priorTags: [Int64: UInt64],
            epochTag: UInt64?)?
    {
        let epoch = try priorEpoch(fold: fold)
        var models: [Int64: DeviceModel] = [:]
        var priors: [Int64: DevicePrior] = [:]
        var tags: [Int64: UInt64] = [:]
        var records: [Store.ModelStateRecord] = []
        for id in ids {
            let key = Self.devicePrefix + String(id)
            if let cache, let epoch, let modelWatermark = try store.modelStateWatermark(key: key),
               let cached = cache.state(of: id, modelWatermark: modelWatermark, epochTag: epoch.tag)
            {
                models[id] = cached.model
                priors[id] = cached.prior
                tags[id] = cached.priorTag
                continue
            }
            // Decoded in place from SQLite's buffer: the state is never copied out whole.
            modelsDecoded += 1
            var size = 0
            var modelWatermark: Int64 = 0
            guard let decoded = try store.withModelState(key: key, { saved, bytes in
                (size, modelWatermark) = (bytes.count, saved)
                return try? DeviceModel(binary: bytes)
            }) else { continue }
            guard let model = decoded, let epoch,
                  let (prior, record, tag) = try epochPriorAndTag(of: id, model: model, saved: model, epoch: epoch, appNames: appNames)
            else { return nil }
            if savesPriors, let record { records.append(record) }
            models[id] = model
            priors[id] = prior
            tags[id] = tag
            // Decoded, a model takes about twice its encoded size; its prior less than that again.
            if let cache {
                cache.keep(model, prior: prior, priorTag: tag, of: id, modelWatermark: modelWatermark, epochTag: epoch.tag, cost: 3 * size)
            }
        }
        return ((models, priors), records, tags, epoch?.tag)
    }

    /// The requested devices brought up to date in memory from their saved state and the
    /// events after `watermark`, nothing saved; their priors those of the saved fold's epoch.
    /// `nil` when saved state is damaged.
    /// - Complexity: O(events after `watermark` read by SQLite + the devices' state).
    private func foldInMemory(_ ids: [Int64], after watermark: Int64, epoch: PriorEpoch, appNames: [Int64: String]) throws
        -> (state: ([Int64: DeviceModel], [Int64: DevicePrior]), events: Int)?
    {
        guard let first = ids.first, let last = ids.last else { return (([:], [:]), 0) }
        guard let everyone = try store.withModelState(key: Self.everyoneKey, { _, bytes in try? DeviceModel(binary: bytes) }) ?? nil
        else { return nil }
        var saved: [Int64: DeviceModel] = [:]
        for id in ids {
            guard let decoded = try store.withModelState(key: Self.devicePrefix + String(id), { _, bytes in try? DeviceModel(binary: bytes) })
            else { continue }
            guard let model = decoded else { return nil }
            saved[id] = model
        }
        var learner = FleetLearner(configuration: configuration, everyone: everyone, models: saved)
        let wanted = Set(ids)
        var folded = 0
        try forEachEvent(afterID: watermark, devices: first...last) { e in
            let device = Self.device(of: e)
            guard device.map(wanted.contains) ?? true else { return }
            folded += 1
            learner.observe(Self.event(e), device: device)
        }
        var priors: [Int64: DevicePrior] = [:]
        for (id, model) in learner.models {
            guard let (prior, _) = try epochPrior(of: id, model: model, saved: saved[id], epoch: epoch, appNames: appNames) else { return nil }
            priors[id] = prior
        }
        return ((learner.models, priors), folded)
    }

    /// What a fold did.
    private struct Fold {
        /// The folded models of the wanted devices that changed (of every wanted device when
        /// `complete`).
        var models: [Int64: DeviceModel]
        /// Whether every device was folded (else unchanged devices are as saved).
        var complete: Bool
        /// The sums of every device's model, indexed.
        var population: PopulationIndex
        /// Events folded.
        var events: Int
        /// The tag of the sums (saved with the watermark when persisted).
        var tag: UInt64
        /// Whether it starts a new prior epoch (``startsEpoch(after:last:complete:growth:)``).
        var startsEpoch: Bool
    }

    /// Folds events `(after, upTo]` into the models and the population sums, and saves them
    /// (inside the caller's transaction) when `persist`.
    ///
    /// Only the devices with new events change (``Store/devicesWithEvents(afterID:)``): each
    /// one's saved model is loaded, its contribution taken out of the saved population sums,
    /// the new events folded in, and the new contribution added (exact: ``PopulationSums``
    /// quantises, so the sums equal those of a fold from scratch, bit for bit). A publish to
    /// every device changes every model, and there is no saved fold to go on from the first
    /// time: then every device is folded.
    ///
    /// Devices are folded ``foldBatchSize`` at a time (by device id), so a fold holds that many
    /// models, not every device of the store: each batch's models are loaded, fed the batch's
    /// events and the publishes to every device, saved, added to the population's sums and
    /// dropped. The result does not depend on the batch size: each model sees the same events
    /// in the same order.
    ///
    /// - Complexity: O(batches × new events read by SQLite + new events folded + folded devices
    ///   × state); memory O(``foldBatchSize`` × state of a device + the population's sums).
    private func fold(
        after watermark: Int64, upTo last: Int64, deviceIDs: [Int64], appNames: [Int64: String], wanted: Set<Int64>?,
        persist: Bool = true
    ) throws -> Fold {
        let name: (Int32) -> String = { appNames[Int64($0)] ?? "" }
        var ids = deviceIDs.sorted()
        var storedEveryone = DeviceModel(configuration: configuration)
        var population = PopulationSums()
        var complete = true
        if watermark > 0, let saved = try savedSums(watermark: watermark),
           let everyone = try store.withModelState(key: Self.everyoneKey, { _, bytes in try? DeviceModel(binary: bytes) }) ?? nil
        {
            storedEveryone = everyone
            let changed = try store.devicesWithEvents(afterID: watermark)
            if !changed.everyDevice {
                (ids, population, complete) = (changed.devices, saved, false)
            }
        } else if watermark > 0, let record = try store.modelState(key: Self.everyoneKey) {
            storedEveryone = try DeviceModel(binary: record.state)
        }
        // Within an epoch, each changed device's model as the epoch pooled it is kept aside
        // before it is overwritten; an epoch whose sums are missing is replaced.
        var epoch = try priorEpoch(fold: try savedFold())
        if let e = epoch, try store.withModelState(key: e.populationKey, { saved, _ in saved == e.watermark }) != true { epoch = nil }
        let startsEpoch = Self.startsEpoch(after: epoch, last: last, complete: complete, growth: priorEpochGrowth)
        let size = max(foldBatchSize, 1)
        var batches = stride(from: 0, to: ids.count, by: size).map { ids[$0..<min($0 + size, ids.count)] }
        // With no device at all, one empty batch still folds the publishes to every device.
        if batches.isEmpty && complete { batches = [[]] }
        var everyone = storedEveryone
        var kept: [Int64: DeviceModel] = [:]
        var folded = 0
        for batch in batches {
            var models: [Int64: DeviceModel] = [:]
            if watermark > 0 {
                for id in batch { if let model = try loadModel(id) { models[id] = model } }
            }
            if persist && !startsEpoch { try keepEpochModels(of: batch, watermark: last) }
            var learner = FleetLearner(configuration: configuration, everyone: storedEveryone, models: models, population: population)
            // Folding only what changed: take each changed device's saved share out first.
            if !complete { for id in models.keys.sorted() { learner.unpool(PopulationSums(model: models[id]!, name: name)) } }
            let first = batch.startIndex == 0
            let range = batch.first.map { $0...batch.last! } ?? (0...0)  // device ids start at 1
            try forEachEvent(afterID: watermark, devices: range) { e in
                // State rows describe the device, not its use: the model never sees them.
                guard e.kind != .state else { return }
                let device = Self.device(of: e)
                // Every batch sees the publishes to every device; they count once.
                if device != nil || first { folded += 1 }
                learner.observe(Self.event(e), device: device)
            }
            var records: [Store.ModelStateRecord] = []
            for id in learner.models.keys.sorted() {
                learner.pool(id, name: name)
                let model = learner.models[id]!
                if persist {
                    records.append(Store.ModelStateRecord(key: Self.devicePrefix + String(id), watermark: last, state: try model.binaryEncoded()))
                }
                if wanted?.contains(id) ?? true { kept[id] = model }
            }
            if persist { try store.saveModelStates(records) }
            (everyone, population) = (learner.everyone, learner.population)
        }
        var tag: UInt64 = 0
        let index = PopulationIndex(population)
        if persist {
            let sums = population.binaryEncoded()
            // After a `forget`, its mark makes the tag (and the epoch it may start) new.
            tag = Self.sumsTag(sums + (try store.modelState(key: ForgetMark.key)?.state ?? []))
            try store.saveModelStates([
                Store.ModelStateRecord(key: Self.everyoneKey, watermark: last, state: try everyone.binaryEncoded()),
                Store.ModelStateRecord(key: Self.populationKey, watermark: last, state: sums),
                Store.ModelStateRecord(key: Self.watermarkKey, watermark: last, state: withUnsafeBytes(of: tag.littleEndian, Array.init)),
            ])
            if startsEpoch { try startEpoch(watermark: last, tag: tag, sums: sums, population: index) }
            sumsCache = (last, population)
        }
        return Fold(models: kept, complete: complete, population: index, events: folded, tag: tag, startsEpoch: startsEpoch)
    }

    /// A device's saved model (decoded in place), `nil` when it has none.
    private func loadModel(_ id: Int64) throws -> DeviceModel? {
        try store.withModelState(key: Self.devicePrefix + String(id)) { _, bytes in
            Result { try DeviceModel(binary: bytes) }
        }?.get()
    }
}
