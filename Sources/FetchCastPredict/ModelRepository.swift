import FetchCastModel
import FetchCastStore
import FetchCastTrace

/// Keeps each device's ``DeviceModel`` and its ``DevicePrior`` in the store, up to date with
/// the events ingested: `predict` never replays history, it folds in only the events added
/// since the last call (there is no training step to remember).
///
/// Apps and devices are keyed by the store's ids (`apps.id`, `devices.id`). State is kept in
/// a compact binary form (``DeviceModel/binaryEncoded()``), one row per device and one per
/// device's prior, so answering for one device reads two rows.
public final class ModelRepository {
    let store: Store
    /// The model constants.
    public let configuration: ModelConfiguration

    static let watermarkKey = "watermark"
    static let devicePrefix = "device:"
    static let priorPrefix = "prior:"
    /// Content published for every device (empty device id), kept so that a device first seen
    /// later still learns from what was published before it appeared.
    static let everyoneKey = "everyone"

    /// Names only change when events are added; kept per watermark so that repeated queries
    /// from an embedding process (a push backend) do not re-read them.
    private var namesCache: Names?

    private struct Names {
        var watermark: Int64
        var devices: [Int64: String]
        var apps: [Int64: String]
        /// Device ids by name, so that asking for one device costs no scan of every device.
        /// Keyed by UTF-8 bytes: `String` keys would merge canonically equivalent ids ("é"
        /// precomposed and decomposed), which the store keeps apart.
        var deviceIDs: [[UInt8]: Int64]
    }

    private func names() throws -> Names {
        let last = try store.lastEventID()
        if let cache = namesCache, cache.watermark == last { return cache }
        let devices = try store.deviceNames()
        var ids: [[UInt8]: Int64] = [:]
        for (id, name) in devices { ids[Array(name.utf8)] = id }
        let loaded = Names(watermark: last, devices: devices, apps: try store.appNames(), deviceIDs: ids)
        namesCache = loaded
        return loaded
    }

    /// Why the last refresh could not save what it folded (a full disk, a read-only store),
    /// `nil` when it saved or had nothing to save. The answer is the same either way; unsaved,
    /// the next call folds the same events again.
    public private(set) var saveFailure: StoreError?

    /// Device models a fold holds in memory at once (the first fold of a large store would
    /// otherwise hold every device's model: about 400 KB each). Results do not depend on it.
    public var foldBatchSize = 256

    /// Creates a repository over a store.
    public init(store: Store, configuration: ModelConfiguration = ModelConfiguration()) {
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

        /// The device id of a name, matched byte for byte (ids that only look alike differ).
        public func device(named name: String) -> Int64? {
            if let id = deviceIDs[Array(name.utf8)], deviceNames[id].map({ ModelRepository.same($0, name) }) == true { return id }
            return deviceNames.first { ModelRepository.same($0.value, name) }?.key
        }
        /// The app id of a name, matched byte for byte.
        public func app(named name: String) -> Int64? { appNames.first { ModelRepository.same($0.value, name) }?.key }

        /// What the other devices say, translated to this device's app ids.
        public func prior(for device: Int64) -> DevicePrior { priors[device] ?? .none }

        /// Refolds a device's model from the events before an instant (`nil` for an unknown
        /// device): what a plan from inside the history must start from.
        var rewind: ((Int64, Double) throws -> DeviceModel?)?

        /// The device's model as it was just before `time`: the stored one when it has seen
        /// nothing at or after `time`, else one folded from the store's events before `time`.
        /// - Complexity: O(1) for a time after the device's history; otherwise O(the store's
        ///   events of the device and publishes to every device), read in id order.
        /// Reads a device's conditions at an instant from the store (`nil` when the snapshot
        /// was not made from a store).
        var readConditions: ((Int64, Double) throws -> DeviceConditions)?

        /// The device's conditions at `time`: each field as the latest `state` row at or before
        /// it set it; unknown without a store or without state rows.
        public func conditions(of device: Int64, at time: Double) throws -> DeviceConditions {
            try readConditions?(device, time) ?? .unknown
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
        var everyone = DeviceModel(configuration: configuration)
        var model: DeviceModel?
        try store.readTransaction {
            try store.scanEvents(afterID: 0, devices: device...device) { e in
                // State rows describe the device, not its use: the model never sees them.
                guard e.timeMicros < limit, e.kind != .state else { return }
                let event = DeviceEvent(
                    time: Double(e.timeMicros) / 1_000_000, utcOffsetSeconds: e.utcOffsetSeconds,
                    app: Int32(truncatingIfNeeded: e.app), kind: e.kind, result: e.result)
                if e.device != nil {
                    if model == nil {
                        model = DeviceModel(configuration: configuration)
                        model!.adoptContent(from: everyone)
                    }
                    model!.observe(event)
                } else {
                    everyone.observe(event)
                    model?.observe(event)
                }
            }
        }
        return model
    }

    /// Folds new events into the persisted models and returns the state of `devices` (every
    /// device when `nil`).
    ///
    /// - Complexity: O(new events + devices × apps) when events were added since the last
    ///   call; otherwise O(size of the requested devices' state).
    public func refresh(devices requested: Set<String>? = nil) throws -> Snapshot {
        let names = try names()
        return try refresh(ids: requested.map { Set($0.compactMap { names.deviceIDs[Array($0.utf8)] }) })
    }

    /// ``refresh(devices:)`` for device ids (every device when `nil`).
    private func refresh(ids wanted: Set<Int64>?) throws -> Snapshot {
        saveFailure = nil
        let names = try names()
        let (deviceNames, appNames) = (names.devices, names.apps)
        var models: [Int64: DeviceModel] = [:]
        var priors: [Int64: DevicePrior] = [:]
        var folded = 0
        // The common case reads: one snapshot, no write lock (so `predict` answers while an
        // ingest runs). Only when events were added or state is damaged does it take the write
        // lock and fold (re-checking the watermark under the lock).
        let ids = (wanted.map(Array.init) ?? Array(deviceNames.keys)).sorted()
        let current: ([Int64: DeviceModel], [Int64: DevicePrior])? = try store.readTransaction {
            try isUpToDate() ? try load(ids) : nil
        }
        if let current {
            (models, priors) = current
        } else {
            func foldNewEvents(persist: Bool) throws {
                let watermark = try store.modelState(key: Self.watermarkKey)?.watermark ?? 0
                let last = try store.lastEventID()
                let fromScratch = watermark >= last  // damaged state, or events forgotten
                (models, priors, folded) = try fold(
                    after: fromScratch ? 0 : watermark, upTo: last, deviceIDs: Array(deviceNames.keys), appNames: appNames,
                    wanted: wanted, persist: persist)
            }
            do {
                try store.writeTransaction {
                    // Another process may have folded while this one waited for the lock.
                    if try isUpToDate(), let loaded = try load(ids) {
                        (models, priors) = loaded
                        return
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
        let hasStates = try store.hasStateRows()
        return Snapshot(models: models, priors: priors, deviceNames: deviceNames, appNames: appNames, eventsFolded: folded,
                        deviceIDs: names.deviceIDs, rewind: { [self] in try model(of: $0, before: $1) },
                        readConditions: !hasStates ? nil : { [store] device, time in
                            try store.conditions(ofDevice: device, atOrBeforeMicros: Int64((time * 1_000_000).rounded(.down)))
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

    private func isUpToDate() throws -> Bool {
        let watermark = try store.modelState(key: Self.watermarkKey)?.watermark ?? 0
        return watermark == (try store.lastEventID())
    }

    /// The stored state of these devices; `nil` when any of it is damaged.
    private func load(_ ids: [Int64]) throws -> ([Int64: DeviceModel], [Int64: DevicePrior])? {
        var models: [Int64: DeviceModel] = [:]
        var priors: [Int64: DevicePrior] = [:]
        for id in ids {
            // Decoded in place from SQLite's buffer: the state is never copied out whole.
            guard let decoded = try store.withModelState(key: Self.devicePrefix + String(id), { _, bytes in
                try? DeviceModel(binary: bytes)
            }) else { continue }
            guard let model = decoded else { return nil }
            models[id] = model
            if let decoded = try store.withModelState(key: Self.priorPrefix + String(id), { _, bytes in try? DevicePrior(binary: bytes) }) {
                guard let prior = decoded else { return nil }
                priors[id] = prior
            }
        }
        return (models, priors)
    }

    /// Folds events `(after, upTo]` into every device's model, rebuilds each device's prior from
    /// the other devices, and saves it all (inside the caller's transaction) when `persist`.
    /// Without `persist`, nothing is written and only the priors of `wanted` are built.
    ///
    /// Devices are folded ``foldBatchSize`` at a time (by device id), so a fold holds that many
    /// models, not every device of the store: each batch's models are loaded, fed the batch's
    /// events and the publishes to every device, saved, added to the population's sums and
    /// dropped. A second pass streams the saved models back, a batch at a time, to give each
    /// device the pooled sums minus its own contribution (``PopulationSums``). The result does
    /// not depend on the batch size: each model sees the same events in the same order.
    ///
    /// - Returns: The models and priors of `wanted` (every device when `nil`) and the number of
    ///   events folded.
    /// - Complexity: O(batches × new events read by SQLite + new events folded + devices × state);
    ///   memory O(``foldBatchSize`` × state of a device + the population's sums).
    private func fold(
        after watermark: Int64, upTo last: Int64, deviceIDs: [Int64], appNames: [Int64: String], wanted: Set<Int64>?,
        persist: Bool = true
    ) throws
        -> ([Int64: DeviceModel], [Int64: DevicePrior], Int)
    {
        let name: (Int32) -> String = { appNames[Int64($0)] ?? "" }
        let ids = deviceIDs.sorted()
        let size = max(foldBatchSize, 1)
        var batches = stride(from: 0, to: ids.count, by: size).map { ids[$0..<min($0 + size, ids.count)] }
        // With no device at all, one empty batch still folds the publishes to every device.
        if batches.isEmpty { batches = [[]] }
        var storedEveryone = DeviceModel(configuration: configuration)
        if watermark > 0, let record = try store.modelState(key: Self.everyoneKey) {
            storedEveryone = try DeviceModel(binary: record.state)
        }
        var everyone = storedEveryone
        var population = PopulationSums()
        var kept: [Int64: DeviceModel] = [:]
        var folded = 0
        var folds: [Int64] = []  // devices with a model, in id order
        for batch in batches {
            var models: [Int64: DeviceModel] = [:]
            if watermark > 0 {
                for id in batch { if let model = try loadModel(id) { models[id] = model } }
            }
            everyone = storedEveryone
            let first = batch.startIndex == 0
            let range = batch.first.map { $0...batch.last! } ?? (1...0)
            try store.scanEvents(afterID: watermark, devices: range) { e in
                // State rows describe the device, not its use: the model never sees them.
                guard e.kind != .state else { return }
                // Every batch sees the publishes to every device; they count once.
                if e.device != nil || first { folded += 1 }
                let event = DeviceEvent(
                    time: Double(e.timeMicros) / 1_000_000, utcOffsetSeconds: e.utcOffsetSeconds,
                    app: Int32(truncatingIfNeeded: e.app), kind: e.kind, result: e.result)
                if let device = e.device {
                    if models[device] == nil {
                        var fresh = DeviceModel(configuration: configuration)
                        fresh.adoptContent(from: everyone)
                        models[device] = fresh
                    }
                    models[device]!.observe(event)
                } else {
                    everyone.observe(event)
                    for key in models.keys { models[key]!.observe(event) }
                }
            }
            var records: [Store.ModelStateRecord] = []
            for id in models.keys.sorted() {
                let model = models[id]!
                population.add(PopulationSums(model: model, name: name))
                if persist {
                    records.append(Store.ModelStateRecord(key: Self.devicePrefix + String(id), watermark: last, state: try model.binaryEncoded()))
                }
                folds.append(id)
                if wanted?.contains(id) ?? true { kept[id] = model }
            }
            if persist { try store.saveModelStates(records) }
        }
        // Unsaved, the other devices' models are gone: build only the priors asked for.
        if !persist { folds = folds.filter { wanted?.contains($0) ?? true } }
        var priors: [Int64: DevicePrior] = [:]
        for start in stride(from: 0, to: folds.count, by: size) {
            var records: [Store.ModelStateRecord] = []
            for id in folds[start..<min(start + size, folds.count)] {
                guard let model = try kept[id] ?? loadModel(id) else { continue }
                var apps: [Int32: String] = [:]
                for app in model.appsBySessions { apps[app] = name(app) }
                let prior = population.devicePrior(excluding: PopulationSums(model: model, name: name), apps: apps)
                if wanted?.contains(id) ?? true { priors[id] = prior }
                records.append(Store.ModelStateRecord(key: Self.priorPrefix + String(id), watermark: last, state: prior.binaryEncoded()))
            }
            if persist { try store.saveModelStates(records) }
        }
        guard persist else { return (kept, priors, folded) }
        try store.saveModelStates([
            Store.ModelStateRecord(key: Self.everyoneKey, watermark: last, state: try everyone.binaryEncoded()),
            Store.ModelStateRecord(key: Self.watermarkKey, watermark: last, state: []),
        ])
        return (kept, priors, folded)
    }

    /// A device's saved model (decoded in place), `nil` when it has none.
    private func loadModel(_ id: Int64) throws -> DeviceModel? {
        try store.withModelState(key: Self.devicePrefix + String(id)) { _, bytes in
            Result { try DeviceModel(binary: bytes) }
        }?.get()
    }
}
