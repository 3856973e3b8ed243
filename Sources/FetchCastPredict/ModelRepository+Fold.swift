import FetchCastCore
import Foundation
import FetchCastModel
import FetchCastStore
import FetchCastTrace

extension ModelRepository {
    /// The saved fold: its watermark (that of the whole saved state) and the tag of its sums
    /// (`nil` for a store saved before priors were kept: then none is read nor saved); `nil`
    /// when there is no saved fold.
    func savedFold() async throws -> SavedFold? {
        try await store.withModelState(key: Self.watermarkKey) { watermark, bytes in
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


    /// The population sums saved by the fold at `watermark`, with every pair; `nil` when
    /// missing or damaged.
    private func savedSums(watermark: Int64) async throws -> PopulationSums? {
        if let cached = sumsCache, cached.watermark == watermark { return cached.sums }
        let decoded = try await store.withModelState(key: Self.populationKey) { saved, bytes in
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
    func load(_ ids: [Int64], fold: SavedFold, appNames: [Int64: String]) async throws
        -> (state: ([Int64: DeviceModel], [Int64: DevicePrior]), priorsToSave: [Store.ModelStateRecord], priorTags: [Int64: UInt64],
            epochTag: UInt64?)?
    {
        let epoch = try await priorEpoch(fold: fold)
        var models: [Int64: DeviceModel] = [:]
        var priors: [Int64: DevicePrior] = [:]
        var tags: [Int64: UInt64] = [:]
        var records: [Store.ModelStateRecord] = []
        for id in ids {
            let key = Self.devicePrefix + String(id)
            if let cache, let epoch, let modelWatermark = try await store.modelStateWatermark(key: key),
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
            guard let decoded = try await store.withModelState(key: key, { saved, bytes in
                (size, modelWatermark) = (bytes.count, saved)
                return try? DeviceModel(binary: bytes)
            }) else { continue }
            guard let model = decoded, let epoch,
                  let (prior, record, tag) = try await epochPriorAndTag(of: id, model: model, saved: model, epoch: epoch, appNames: appNames)
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
    func foldInMemory(_ ids: [Int64], after watermark: Int64, epoch: PriorEpoch, appNames: [Int64: String]) async throws
        -> (state: ([Int64: DeviceModel], [Int64: DevicePrior]), events: Int)?
    {
        guard let first = ids.first, let last = ids.last else { return (([:], [:]), 0) }
        guard let everyone = try await store.withModelState(key: Self.everyoneKey, { _, bytes in try? DeviceModel(binary: bytes) }) ?? nil
        else { return nil }
        var saved: [Int64: DeviceModel] = [:]
        for id in ids {
            guard let decoded = try await store.withModelState(key: Self.devicePrefix + String(id), { _, bytes in try? DeviceModel(binary: bytes) })
            else { continue }
            guard let model = decoded else { return nil }
            saved[id] = model
        }
        var learner = FleetLearner(configuration: configuration, everyone: everyone, models: saved)
        let wanted = Set(ids)
        var folded = 0
        try await forEachEvent(afterID: watermark, devices: first...last) { e in
            let device = Self.device(of: e)
            guard device.map(wanted.contains) ?? true else { return }
            folded += 1
            learner.observe(Self.event(e), device: device)
        }
        var priors: [Int64: DevicePrior] = [:]
        for (id, model) in learner.models {
            guard let (prior, _) = try await epochPrior(of: id, model: model, saved: saved[id], epoch: epoch, appNames: appNames) else { return nil }
            priors[id] = prior
        }
        return ((learner.models, priors), folded)
    }

    /// What a fold did.
    struct Fold {
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
    func fold(
        after watermark: Int64, upTo last: Int64, deviceIDs: [Int64], appNames: [Int64: String], wanted: Set<Int64>?,
        persist: Bool = true
    ) async throws -> Fold {
        let name: (Int32) -> String = { appNames[Int64($0)] ?? "" }
        var ids = deviceIDs.sorted()
        var storedEveryone = DeviceModel(configuration: configuration)
        var population = PopulationSums()
        var complete = true
        if watermark > 0, let saved = try await savedSums(watermark: watermark),
           let everyone = try await store.withModelState(key: Self.everyoneKey, { _, bytes in try? DeviceModel(binary: bytes) }) ?? nil
        {
            storedEveryone = everyone
            let changed = try await store.devicesWithEvents(afterID: watermark)
            if !changed.everyDevice {
                (ids, population, complete) = (changed.devices, saved, false)
            }
        } else if watermark > 0, let record = try await store.modelState(key: Self.everyoneKey) {
            storedEveryone = try DeviceModel(binary: record.state)
        }
        // Within an epoch, each changed device's model as the epoch pooled it is kept aside
        // before it is overwritten; an epoch whose sums are missing is replaced.
        var epoch = try await priorEpoch(fold: try savedFold())
        if let e = epoch, try await store.withModelState(key: e.populationKey, { saved, _ in saved == e.watermark }) != true { epoch = nil }
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
                for id in batch { if let model = try await loadModel(id) { models[id] = model } }
            }
            if persist && !startsEpoch { try await keepEpochModels(of: batch, watermark: last) }
            var learner = FleetLearner(configuration: configuration, everyone: storedEveryone, models: models, population: population)
            // Folding only what changed: take each changed device's saved share out first.
            if !complete { for id in models.keys.sorted() { learner.unpool(PopulationSums(model: models[id]!, name: name)) } }
            let first = batch.startIndex == 0
            let range = batch.first.map { $0...batch.last! } ?? (0...0)  // device ids start at 1
            try await forEachEvent(afterID: watermark, devices: range) { e in
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
            if persist { try await store.saveModelStates(records) }
            (everyone, population) = (learner.everyone, learner.population)
        }
        var tag: UInt64 = 0
        let index = PopulationIndex(population)
        if persist {
            let sums = population.binaryEncoded()
            // After a `forget`, its mark makes the tag (and the epoch it may start) new.
            let forgotten = try await store.modelState(key: ForgetMark.key)?.state ?? []
            tag = Self.sumsTag(sums + forgotten)
            try await store.saveModelStates([
                Store.ModelStateRecord(key: Self.everyoneKey, watermark: last, state: try everyone.binaryEncoded()),
                Store.ModelStateRecord(key: Self.populationKey, watermark: last, state: sums),
                Store.ModelStateRecord(key: Self.watermarkKey, watermark: last, state: withUnsafeBytes(of: tag.littleEndian, Array.init)),
            ])
            if startsEpoch { try await startEpoch(watermark: last, tag: tag, sums: sums, population: index) }
            sumsCache = (last, population)
        }
        return Fold(models: kept, complete: complete, population: index, events: folded, tag: tag, startsEpoch: startsEpoch)
    }

    /// A device's saved model (decoded in place), `nil` when it has none.
    func loadModel(_ id: Int64) async throws -> DeviceModel? {
        try await store.withModelState(key: Self.devicePrefix + String(id)) { _, bytes in
            Result { try DeviceModel(binary: bytes) }
        }?.get()
    }
}
