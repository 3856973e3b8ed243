import FetchCastModel
import FetchCastStore

/// Keeping every device's scheduler saved and current, so that a first plan reads one row.
///
/// A plan starts from a following scheduler caught up with the device's history. Without a
/// saved one that means replaying the history (a few milliseconds for a device of the
/// benchmark's fleet, tens for a long trace); with one saved as of the device's last event it
/// means reading and restoring one row. ``keepSchedulersCurrent(request:batchSize:shouldStop:)``
/// saves, for each device whose saved scheduler is missing or behind, the very scheduler
/// `predict --device D` saves (same key, same bytes), so what a plan answers does not depend
/// on whether it was warmed: only how fast it answers.
///
/// What a pass must look at is kept in a marker row (``warmMarkerKey``): the store's last event
/// and the prior epoch as of the last complete pass. A new epoch changes every device's prior,
/// so every scheduler is caught up again; otherwise only the devices with events since.
extension ModelRepository {
    /// The row recording the last complete warm-up: its watermark is the last event it covered;
    /// its state the watermark and tag of the prior epoch it ran in (16 bytes, little-endian).
    /// (`schedulers-current` before plan tables, `warmed-current` before saved schedulers and plan
    /// tables of format 3, `warmed-current-3` before format 4, `warmed-current-4` before saved
    /// schedulers of format 6: a store warmed then is warmed
    /// again, once, every device's rows saved anew in the present format; a new format of either
    /// takes a new key.)
    static let warmMarkerKey = "warmed-current-5"

    /// What a warm-up did.
    package struct WarmOutcome: Sendable, Equatable {
        /// Devices looked at.
        package var devices = 0
        /// Schedulers caught up and saved (missing, behind, or of an older epoch).
        package var saved = 0
        /// Whether it looked at every device it had to (a stopped pass leaves the marker as it was).
        package var complete = false
    }

    /// Saves, for every device whose saved scheduler for `request`'s apps and budget is missing
    /// or behind its events, that scheduler caught up as of the device's last event
    /// (``Predictor/catchUp(_:request:snapshot:)``).
    ///
    /// Needs a saved fold (``refresh(devices:)`` by a repository that saves folds); without one it
    /// does nothing. Does not fold for the fleet: devices with events newer than the saved fold
    /// are brought up to date in memory, as a reader does. Set ``savesSchedulers``.
    /// - Parameters:
    ///   - request: Whose scheduler (apps and budget; the device, times and count are ignored):
    ///     by default that of a plan with default parameters.
    ///   - batchSize: Devices whose state is held at once.
    ///   - shouldStop: Asked between devices, and while another process warms the same store;
    ///   `true` ends the pass early (marker unchanged).
    ///
    /// One process warms a store at a time (``ModelStore/withWarmUpTurn(shouldStop:_:)``): the
    /// others wait for their turn, then look only at what the last complete pass did not cover.
    /// - Complexity: O(devices looked at × (a saved row, or the device's history when it must be
    ///   caught up from nothing)); after a pass, O(devices with new events) until the next epoch.
    package func keepSchedulersCurrent(
        request: PredictionRequest = PredictionRequest(), batchSize: Int = 256, shouldStop: () -> Bool = { false }
    ) async throws -> WarmOutcome {
        guard savesSchedulers else { return WarmOutcome() }
        return try await store.withWarmUpTurn(shouldStop: shouldStop) {
            try await warmUpPass(request: request, batchSize: batchSize, shouldStop: shouldStop)
        } ?? WarmOutcome()
    }

    /// ``keepSchedulersCurrent(request:batchSize:shouldStop:)``'s pass, in its turn.
    private func warmUpPass(request: PredictionRequest, batchSize: Int, shouldStop: () -> Bool) async throws -> WarmOutcome {
        var outcome = WarmOutcome()
        try await forgetOlderFormats()
        // What to look at, from one read snapshot: the devices with events since the last
        // complete pass of the same epoch, or every device.
        var ids: [Int64] = []
        var covered: (last: Int64, epoch: PriorEpoch)?
        try await store.readTransaction {
            let last = try await store.lastEventID()
            guard last > 0, let fold = try await savedFold(), let epoch = try await priorEpoch(fold: fold) else { return }
            covered = (last, epoch)
            if let marker = try await warmMarker(), marker.epochWatermark == epoch.watermark, marker.epochTag == epoch.tag, marker.last <= last {
                let changed = try await store.devicesWithEvents(afterID: marker.last)
                if !changed.everyDevice {
                    ids = changed.devices
                    return
                }
            }
            ids = try await store.deviceNames(afterID: 0).keys.sorted()
        }
        guard let covered else { return outcome }
        let saveBefore = schedulersSaved
        var start = 0
        // Plan tables are kept for the default request only (the one plans are asked with
        // most): another request's apps or budget would need tables of their own.
        let keepsTables = PlanTable.keeps(request)
        while start < ids.count {
            let batch = ids[start..<min(ids.count, start + max(1, batchSize))]
            start += batch.count
            // What the tables are valid for is read before the snapshot they are planned from:
            // events or an epoch that come later only make them look older than they are.
            let (watermark, epoch) = try await store.readTransaction { (try await store.lastEventID(), try await priorEpoch(fold: try await savedFold())) }
            let snapshot = try await refresh(ids: Set(batch))
            // The batch's caught-up schedulers are saved with its tables, in one transaction.
            pendingCheckpoints = []
            defer { pendingCheckpoints = nil }
            // A device looked at gets a new table or none: a later check trusts that a complete
            // pass left no table older than its device's events (``precomputedPlan(_:)``).
            var tables: [Store.ModelStateRecord] = []
            var dropped: [Int64] = []
            var stopped = false
            // The batch's catch-ups read in one transaction (they write nothing until the tables
            // are saved), the last event's number read once: on a server database, two round
            // trips a device (its saved scheduler, its history) instead of five.
            try await store.readTransaction {
                try await store.prefetchModelStates(keys: [], device: nil)
                for id in batch {
                    if shouldStop() {
                        stopped = true
                        break
                    }
                    outcome.devices += 1
                    if let (scheduler, last) = try await Predictor.catchUp(id, request: request, snapshot: snapshot), keepsTables, let epoch {
                        let table = PlanTable(device: id, scheduler: scheduler, last: last, snapshot: snapshot)
                        tables.append(planTableRecord(
                            table, device: id, watermark: watermark, epoch: epoch, note: snapshot.models[id].map(EmptyPlanNote.Facts.init)))
                    } else {
                        dropped.append(id)
                    }
                }
            }
            let saving = pendingCheckpoints ?? []
            pendingCheckpoints = nil
            if try await saveTables(tables, dropping: dropped, checkpoints: saving, epochTag: snapshot.epochTag) {
                schedulersSaved += saving.count
            }
            if stopped {
                outcome.saved = schedulersSaved - saveBefore
                return outcome
            }
        }
        outcome.saved = schedulersSaved - saveBefore
        outcome.complete = true
        var w = BinaryWriter()
        w.uint64(UInt64(bitPattern: covered.epoch.watermark))
        w.uint64(covered.epoch.tag)
        try await store.writeTransaction {
            try await store.saveModelStates([Store.ModelStateRecord(key: Self.warmMarkerKey, watermark: covered.last, state: w.bytes)])
        }
        return outcome
    }

    /// Saves caught-up schedulers and plan tables and drops the tables of `dropped`, in one
    /// transaction (a few statements on a server database, not a few per device), if the
    /// store's prior epoch is still the one they were made in (`epochTag`; after a `forget` they
    /// may hold forgotten events: then nothing is saved, and `false` returned). A failure (a
    /// full disk) fails the pass, so that no marker says these devices' tables are current.
    private func saveTables(
        _ tables: [Store.ModelStateRecord], dropping dropped: [Int64], checkpoints saving: [(checkpoint: SchedulerCheckpoint, key: String)],
        epochTag: UInt64?
    ) async throws -> Bool {
        guard !tables.isEmpty || !dropped.isEmpty || !saving.isEmpty else { return true }
        return try await store.writeTransaction {
            guard try await epochIsCurrent(epochTag) else { return false }
            for id in dropped { try await store.deleteModelStates(prefix: Self.planTablePrefix + "\(id):") }
            try await checkpoints.save(saving)
            try await store.saveModelStates(tables)
            return true
        }
    }

    /// Markers of warm-ups whose schedulers and plan tables were of an older format (or keyed
    /// by a `SchedulerConfiguration` that had `planMinimumValue`): their rows are never read
    /// again, and the keys of the schedulers are not those this build saves.
    static let olderWarmMarkerKeys = ["warmed-current", "schedulers-current", "warmed-current-3", "warmed-current-4"]

    /// Deletes, once, the saved schedulers and plan tables of a store warmed by an older build
    /// (``olderWarmMarkerKeys``): the next pass saves every device's anew, under their present
    /// keys, and the rows of the old keys would stay unread.
    func forgetOlderFormats() async throws {
        var older = false
        for key in Self.olderWarmMarkerKeys where try await store.modelStateWatermark(key: key) != nil { older = true }
        guard older else { return }
        try await store.writeTransaction {
            try await checkpoints.invalidateAll()
            try await store.deleteModelStates(prefix: Self.planTablePrefix)
            for key in Self.olderWarmMarkerKeys { try await store.deleteModelState(key: key) }
        }
    }

    /// The last complete warm-up's last event and epoch, if one is recorded.
    func warmMarker() async throws -> (last: Int64, epochWatermark: Int64, epochTag: UInt64)? {
        try await store.withModelState(key: Self.warmMarkerKey) { watermark, bytes -> (Int64, Int64, UInt64)? in
            var r = BinaryReader(bytes)
            guard let epochWatermark = try? r.uint64(), let tag = try? r.uint64(), r.offset == bytes.count else { return nil }
            return (watermark, Int64(bitPattern: epochWatermark), tag)
        } ?? nil
    }
}
