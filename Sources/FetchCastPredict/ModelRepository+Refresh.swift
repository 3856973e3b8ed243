import FetchCastCore
import Foundation
import FetchCastModel
import FetchCastStore
import FetchCastTrace

extension ModelRepository {
    /// Folds new events into the persisted models and returns the state of `devices` (every
    /// device when `nil`).
    ///
    /// - Complexity: O(new events + changed devices × state) when events were added since the
    ///   last call (every device's state when one of them is a publish to every device);
    ///   otherwise O(size of the requested devices' state).
    public func refresh(devices requested: DeviceIDs? = nil) async throws -> Snapshot {
        let names = try await names()
        return try await refresh(ids: requested.map { Set($0.utf8.compactMap { names.deviceIDs[$0] }) })
    }

    /// ``refresh(devices:)`` for device ids (every device when `nil`).
    package func refresh(ids wanted: Set<Int64>?) async throws -> Snapshot {
        saveFailure = nil
        var names = try await names()
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
        try await store.readTransaction {
            names = try await self.names()
            let ids = (wanted.map(Array.init) ?? Array(names.devices.keys)).sorted()
            let last = try await store.lastEventID()
            if last == 0 {  // no events: nothing to fold
                state = ([:], [:])
                return
            }
            guard let saved = try await savedFold() else { return }
            if saved.watermark == last {
                if let loaded = try await load(ids, fold: saved, appNames: names.apps) {
                    state = loaded.state
                    priorsToSave = loaded.priorsToSave
                    priorTags = loaded.priorTags
                    epochTag = loaded.epochTag
                }
            } else if !savesFolds, saved.watermark < last {
                guard let epoch = try await priorEpoch(fold: saved) else { return }
                // Devices with no event since the saved fold (nor publish to every device) are
                // as saved, read like any saved device (from the cache when it has them); the
                // others are brought up to date in memory.
                var unchanged: [Int64] = [], changed: [Int64] = []
                for id in ids {
                    if try await store.hasEvents(ofDevice: id, afterID: saved.watermark, beforeMicros: .max) { changed.append(id) } else { unchanged.append(id) }
                }
                guard let loaded = try await load(unchanged, fold: saved, appNames: names.apps),
                      let current = try await foldInMemory(changed, after: saved.watermark, epoch: epoch, appNames: names.apps)
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
                try await store.writeTransaction {
                    guard let current = try await priorEpoch(fold: try savedFold()), current.watermark == epochWatermark else { return }
                    try await store.saveModelStates(priorsToSave)
                }
            } catch let error as StoreError where error.isWriteFailure {}
        }
        if state == nil {
            func foldNewEvents(persist: Bool) async throws {
                names = try await self.names()
                let ids = (wanted.map(Array.init) ?? Array(names.devices.keys)).sorted()
                let watermark = try await store.modelState(key: Self.watermarkKey)?.watermark ?? 0
                let last = try await store.lastEventID()
                let fromScratch = watermark >= last  // damaged state, or events forgotten
                let fold = try await self.fold(after: fromScratch ? 0 : watermark, upTo: last, deviceIDs: Array(names.devices.keys),
                                         appNames: names.apps, wanted: wanted, persist: persist)
                folded = fold.events
                var models: [Int64: DeviceModel] = [:]
                var priors: [Int64: DevicePrior] = [:]
                var records: [Store.ModelStateRecord] = []
                // Unsaved (a store that cannot take the fold), a fold that starts an epoch is
                // its own; within the epoch, the changed devices' saved models are still those
                // the epoch pooled, the rest are unchanged.
                let epoch = persist || !fold.startsEpoch ? try await priorEpoch(fold: try await savedFold()) : nil
                epochTag = epoch?.tag
                for id in ids {
                    // Devices the fold did not change are as saved.
                    var found = fold.models[id]
                    if found == nil, !fold.complete { found = try await loadModel(id) }
                    guard let model = found else { continue }
                    models[id] = model
                    if let epoch {
                        let saved = !persist && fold.models[id] != nil ? try await loadModel(id) : model
                        guard let (prior, record) = try await epochPrior(of: id, model: model, saved: saved, epoch: epoch, appNames: names.apps)
                        else { throw StoreError(path: store.path, message: "the saved population of the prior epoch is damaged; delete the store's model_state rows to fold again from the events") }
                        priors[id] = prior
                        if persist, let record { records.append(record) }
                    } else {
                        priors[id] = Self.prior(of: model, pooledAs: model, in: fold.population, appNames: names.apps)
                    }
                }
                if persist { try await store.saveModelStates(records) }
                state = (models, priors)
            }
            do {
                try await store.writeTransaction {
                    // Another process may have folded while this one waited for the lock.
                    if let saved = try await savedFold(), await saved.watermark == (try store.lastEventID()) {
                        names = try await self.names()
                        let ids = (wanted.map(Array.init) ?? Array(names.devices.keys)).sorted()
                        if let loaded = try await load(ids, fold: saved, appNames: names.apps) {
                            state = loaded.state
                            priorTags = loaded.priorTags
                            epochTag = loaded.epochTag
                            try await store.saveModelStates(loaded.priorsToSave)
                            return
                        }
                    }
                    try await foldNewEvents(persist: true)
                }
            } catch let error as StoreError where error.isWriteFailure {
                // The store cannot take the folded state (full disk, read-only file): answer
                // from the same fold, kept in memory only (the transaction rolled back).
                try await store.readTransaction { try await foldNewEvents(persist: false) }
                saveFailure = error
            }
        }
        let (models, priors) = state ?? ([:], [:])
        return Snapshot(models: models, priors: priors, deviceNames: names.devices, appNames: names.apps, eventsFolded: folded,
                        deviceIDs: names.deviceIDs, priorTags: priorTags, epochTag: epochTag, rewind: { [self] in try await model(of: $0, before: $1) },
                        catchUp: { [self] in
                            try await caughtUp($0, apps: $1, configuration: $2, model: $3, prior: $4, priorTag: $5, epochTag: epochTag, time: $6, inclusive: $7)
                        },
                        readHistory: { [self] device, time, body in
                            let limit = Int64((time * 1_000_000).rounded(.down)) + 1
                            try await store.readTransaction { try await forEachHistoryEvent(ofDevice: device, beforeMicros: limit, body) }
                        })
    }

    /// Brings the model up to date, then calls `body` with snapshots of `device` alone, or of
    /// every device in name order, `batchSize` devices at a time: what `predict` and `export` do
    /// for a whole store without holding every device's state at once.
    ///
    /// A snapshot names every device and app; only its batch's models are loaded. Events
    /// ingested while the batches run are folded in by the next batch's refresh.
    /// - Complexity: memory O(`batchSize` × state of a device), besides the fold's own bound.
    public func forEachBatch(device: String?, batchSize: Int = 256, _ body: (Snapshot) async throws -> Void) async throws {
        if let device {
            try await body(try await refresh(devices: [device]))
            return
        }
        // Batches of ids, not of names: a set of names would merge canonically equivalent ids.
        let ids = try await refresh(ids: []).deviceNames.sorted { Self.precedes($0.value, $1.value) }.map(\.key)
        var start = 0
        repeat {
            let batch = ids[start..<min(ids.count, start + max(1, batchSize))]
            try await body(try await refresh(ids: Set(batch)))
            start += max(1, batchSize)
        } while start < ids.count
    }

    /// Whether two ids are the same bytes (`==` on `String` also equates canonically
    /// equivalent text, which the store keeps apart).
    package static func same(_ a: String, _ b: String) -> Bool { a.utf8.elementsEqual(b.utf8) }

    /// Byte order of ids (UTF-8), as SQLite sorts them: total and deterministic, unlike `<` on
    /// `String`, under which canonically equivalent ids tie.
    package static func precedes(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }
}
