import FetchCastModel
import FetchCastStore

/// Priors change in epochs, not at every fold.
///
/// A device's prior is what the other devices said as of the *epoch*: the population sums of
/// the fold that started it, without the device's own share as pooled there (its model at the
/// epoch; none for a device first seen later), for the apps the device uses now. A fold starts
/// a new epoch when it is the first, when it changes every device (a publish to every device,
/// a fold from scratch), or when the store's events have grown by a quarter since the epoch
/// (``ModelRepository/priorEpochGrowth``);
/// other folds leave every device's prior as it was. So a scheduler caught up for one device
/// stays exact while other devices post events (``ModelRepository/caughtUp(_:apps:configuration:model:prior:priorTag:time:inclusive:)``
/// checks its prior's tag), instead of every fold moving every device's prior by a hair.
///
/// Kept in the store: the epoch's watermark and the tag of its sums (``epochKey``), a copy of
/// its sums (``epochPopulationKey``), and, for each device a later fold changed, its model as the
/// epoch pooled it (``epochDevicePrefix``; empty when it had none), saved aside before the fold
/// overwrites it. A device without that row is as the epoch pooled it.
extension ModelRepository {
    /// The epoch priors come from.
    struct PriorEpoch: Equatable {
        /// The watermark of the fold that started it.
        var watermark: Int64
        /// ``sumsTag(_:)`` of its population sums.
        var tag: UInt64
        /// The row holding its sums.
        var populationKey: String
    }

    /// The saved epoch: its watermark, and the tag of its sums as the state.
    static let epochKey = "epoch"
    /// A copy of the epoch's population sums (``PopulationSums``, binary).
    static let epochPopulationKey = "epoch-population"
    /// A device's model as the epoch pooled it, kept once a later fold changed the device.
    static let epochDevicePrefix = "epoch-device:"

    /// Whether a fold up to event `last` starts a new epoch: the first fold (no epoch), a fold
    /// that changed every device, or events grown by at least `growth` (a share of the
    /// epoch's) since the epoch.
    static func startsEpoch(after epoch: PriorEpoch?, last: Int64, complete: Bool, growth: Double) -> Bool {
        guard let epoch, !complete else { return true }
        return Double(last - epoch.watermark) >= max(1, Double(epoch.watermark) * growth)
    }

    /// The saved epoch; for a store folded by fetchcast 0.5 or earlier (no epoch row), the
    /// saved fold itself. `nil` when neither is saved.
    func priorEpoch(fold: SavedFold?) async throws -> PriorEpoch? {
        let saved = try await store.withModelState(key: Self.epochKey) { watermark, bytes in
            bytes.count == 8
                ? PriorEpoch(watermark: watermark, tag: bytes.loadUnaligned(as: UInt64.self).littleEndian, populationKey: Self.epochPopulationKey)
                : nil
        } ?? nil
        if let saved { return saved }
        guard let fold, let tag = fold.tag else { return nil }
        return PriorEpoch(watermark: fold.watermark, tag: tag, populationKey: Self.populationKey)
    }

    /// The rows a fold that starts an epoch saves (inside its transaction), dropping the
    /// previous epoch's models kept aside and the priors computed from it.
    func startEpoch(watermark: Int64, tag: UInt64, sums: [UInt8], population: PopulationIndex) async throws {
        try await store.deleteModelStates(prefix: Self.epochDevicePrefix)
        try await store.deleteModelStates(prefix: Self.priorPrefix)
        try await store.saveModelStates([
            Store.ModelStateRecord(key: Self.epochKey, watermark: watermark, state: withUnsafeBytes(of: tag.littleEndian, Array.init)),
            Store.ModelStateRecord(key: Self.epochPopulationKey, watermark: watermark, state: sums),
        ])
        epochPopulationCache = (tag, population)
    }

    /// Before a fold within the epoch overwrites the saved models of `ids`, keeps aside those
    /// not kept yet: each as the epoch pooled it (its saved model, which no fold since the
    /// epoch changed), or an empty row for a device the epoch did not know.
    func keepEpochModels(of ids: some Sequence<Int64>, watermark: Int64) async throws {
        var records: [Store.ModelStateRecord] = []
        for id in ids {
            let aside = Self.epochDevicePrefix + String(id)
            guard try await store.withModelState(key: aside, { _, _ in true }) == nil else { continue }
            let saved = try await store.modelState(key: Self.devicePrefix + String(id))
            records.append(Store.ModelStateRecord(key: aside, watermark: saved?.watermark ?? watermark, state: saved?.state ?? []))
        }
        try await store.saveModelStates(records)
    }

    /// The epoch's population sums, indexed; `nil` when missing or damaged. Decoded once per
    /// epoch: kept in memory while the epoch stays.
    func epochPopulation(_ epoch: PriorEpoch) async throws -> PopulationIndex? {
        if let cached = epochPopulationCache, cached.tag == epoch.tag { return cached.population }
        let decoded = try await store.withModelState(key: epoch.populationKey) { saved, bytes in
            saved == epoch.watermark ? try? PopulationIndex(binary: bytes) : nil
        }
        guard let index = decoded ?? nil else { return nil }
        epochPopulationCache = (epoch.tag, index)
        return index
    }

    /// The device's model as the epoch pooled it: the one kept aside when a later fold changed
    /// it (`nil` when the epoch did not know the device), else `saved`, its saved model.
    func epochModel(of id: Int64, saved: DeviceModel?) async throws -> DeviceModel? {
        let aside = try await store.withModelState(key: Self.epochDevicePrefix + String(id)) { _, bytes -> Result<DeviceModel?, any Error> in
            bytes.isEmpty ? .success(nil) : Result { try DeviceModel(binary: bytes) }
        }
        if let aside { return try aside.get() }
        return saved
    }

    /// The key a saved prior is kept under within an epoch: the epoch's tag and the apps it is
    /// for (a device that starts using an app gets a prior for it).
    static func priorKey(epoch: PriorEpoch, apps: [Int32]) -> UInt64 {
        var bytes = withUnsafeBytes(of: epoch.tag.littleEndian, Array.init)
        for app in apps.sorted() { bytes += withUnsafeBytes(of: app.littleEndian, Array.init) }
        return sumsTag(bytes)
    }

    /// A device's prior in the epoch, for the apps of `model` (its current model): kept in the
    /// store when computed before, else computed from the epoch's sums without the device's
    /// share there (`saved`: its saved model, as the epoch pooled it unless one was kept
    /// aside). `record`: the row to keep it in, when computed. `nil` when saved state is damaged.
    /// - Complexity: O(1) reads when kept; else O(the device's apps × 168 + apps² + pairs), and
    ///   the epoch's sums decoded once per process.
    func epochPrior(of id: Int64, model: DeviceModel, saved: DeviceModel?, epoch: PriorEpoch, appNames: [Int64: String]) async throws
        -> (prior: DevicePrior, record: Store.ModelStateRecord?)?
    {
        try await epochPriorAndTag(of: id, model: model, saved: saved, epoch: epoch, appNames: appNames).map { ($0.prior, $0.record) }
    }

    /// ``epochPrior(of:model:saved:epoch:appNames:)`` with the prior's ``priorTag(_:)``: hashed
    /// from the saved bytes when the prior was saved (they are its encoding), else encoded.
    func epochPriorAndTag(of id: Int64, model: DeviceModel, saved: DeviceModel?, epoch: PriorEpoch, appNames: [Int64: String]) async throws
        -> (prior: DevicePrior, record: Store.ModelStateRecord?, tag: UInt64)?
    {
        let key = Self.priorKey(epoch: epoch, apps: model.appsBySessions)
        if let kept = try await savedPrior(of: id, key: key) { return (kept.prior, nil, kept.tag) }
        guard let population = try await epochPopulation(epoch) else { return nil }
        let pooled = try await epochModel(of: id, saved: saved)
        let prior = Self.prior(of: model, pooledAs: pooled, in: population, appNames: appNames)
        let record = Self.priorRecord(prior, of: id, watermark: epoch.watermark, tag: key)
        return (prior, record, Self.sumsTag(Array(record.state[8...])))
    }

    /// The saved prior of a device kept under `key`; `nil` when missing, of another epoch or
    /// apps, or damaged.
    private func savedPrior(of id: Int64, key: UInt64) async throws -> (prior: DevicePrior, tag: UInt64)? {
        try await store.withModelState(key: Self.priorPrefix + String(id)) { _, bytes -> (DevicePrior, UInt64)? in
            guard bytes.count >= 8, bytes.loadUnaligned(as: UInt64.self).littleEndian == key else { return nil }
            let encoded = UnsafeRawBufferPointer(rebasing: bytes[8...])
            return (try? DevicePrior(binary: encoded)).map { ($0, Self.sumsTag(encoded)) }
        } ?? nil
    }
}
