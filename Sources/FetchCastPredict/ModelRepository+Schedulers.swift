import FetchCastCore
import Foundation
import FetchCastModel
import FetchCastStore
import FetchCastTrace

extension ModelRepository {
    /// The model of `device` folded from the store's events strictly before `time`, exactly as
    /// the fold would have left it then (publishes to every device included, content adopted
    /// from them when the device first appears).
    func model(of device: Int64, before time: Double) async throws -> DeviceModel? {
        let limit = Int64((time * 1_000_000).rounded(.up))
        var learner = FleetLearner<Int64>(configuration: configuration)
        try await store.readTransaction {
            try await forEachEvent(afterID: 0, devices: device...device) { e in
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


    /// A tag of a prior: a 64-bit hash of ``DevicePrior/binaryEncoded()``. A caught-up scheduler
    /// is only reused with a prior of the same tag.
    static func priorTag(_ prior: DevicePrior) -> UInt64 { sumsTag(prior.binaryEncoded()) }

    /// Whether a scheduler caught up as of `watermark` with the events before `limitMicros` is
    /// still exactly what catching up from nothing would give, the store being at `last`: no
    /// event of `device` (nor publish to every device) added since was before `limitMicros`.
    /// Events of other devices do not matter (the prior is checked on its own).
    private func stillCaughtUp(_ device: Int64, watermark: Int64, limitMicros: Int64, last: Int64) async throws -> Bool {
        if watermark == last { return true }
        guard watermark < last else { return false }
        return try await !store.hasEvents(ofDevice: device, afterID: watermark, beforeMicros: limitMicros)
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
    ) async throws -> LearnedPolicy? {
        let micros = time * 1_000_000
        let limit = inclusive ? Int64(micros.rounded(.down)) + 1 : Int64(micros.rounded(.up))
        let key = SchedulerKey(device: device, apps: apps, configuration: configuration, model: model)
        let tag = knownTag ?? Self.priorTag(prior)
        var toSave: CaughtUp?
        let caughtUp = await Result(awaiting: { () async throws -> LearnedPolicy? in try await store.readTransaction {
            let watermark = try await store.lastEventID()
            func usable(limitMicros: Int64, watermark keptWatermark: Int64, tag keptTag: UInt64?) async throws -> Bool {
                guard limitMicros <= limit else { return false }
                if keptTag == tag { return try await stillCaughtUp(device, watermark: keptWatermark, limitMicros: limitMicros, last: watermark) }
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
               try await usable(limitMicros: kept.limitMicros, watermark: kept.watermark, tag: cached?.priorTag) {
                state = kept
                schedulersReused += 1
            } else if let saved = await saved(key), try await usable(limitMicros: saved.limitMicros, watermark: saved.watermark, tag: saved.priorTag),
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
            try await forEachHistoryEvent(ofDevice: device, fromMicros: state.limitMicros, beforeMicros: limit, tell)
            let advanced = state.limitMicros != limit || state.watermark != watermark
            state.limitMicros = limit
            state.watermark = watermark
            // A kept scheduler may or may not be in the store (another process, an earlier
            // save): saved again when it moved; a restored one only when it read new events.
            if advanced, !storedAlready || told > 0 { toSave = state }
            if advanced || cached == nil || cached?.epochTag != epochTag { schedulerCache.keep(state, priorTag: tag, epochTag: epochTag, for: key) }
            if !inclusive, micros == micros.rounded() {
                // The events at `time` that come before the looks at it.
                try await forEachHistoryEvent(ofDevice: device, fromMicros: limit, beforeMicros: limit + 1) { e in
                    if Self.step(of: e) < .looks { try tell(e) }
                }
            }
            return state.seen ? state.scheduler : nil
        } })
        // Saved after the read (whether it ended or failed), in a transaction of its own.
        if let toSave { await save(toSave, key: key, priorTag: tag, epochTag: epochTag) }
        return try caughtUp.get()
    }

    /// The start of every saved scheduler's key.
    static let schedulerPrefix = "scheduler:"

    /// The store's key of a caught-up scheduler: the device and a hash of what it plans for.
    /// - Complexity: O(apps) once the repository has encoded the same constants.
    func storageKey(_ key: SchedulerKey) -> String {
        Self.schedulerPrefix + "\(key.device):" + String(storageHash(apps: key.apps, configuration: key.configuration, model: key.model), radix: 16)
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

    /// Where caught-up schedulers are kept for the next process: the store's model state.
    var checkpoints: StoreSchedulerCheckpoints { StoreSchedulerCheckpoints(store: store) }

    /// A caught-up scheduler saved by an earlier process (`predict` runs one process per call),
    /// its scheduler's state not yet restored; `nil` when none is saved or it cannot be read.
    private func saved(_ key: SchedulerKey) async -> SchedulerCheckpoint? {
        (try? await checkpoints.checkpoint(key: storageKey(key))) ?? nil
    }

    /// Saves a caught-up scheduler for the next process, when this repository saves its folds
    /// and the store's prior epoch is still the one it was caught up in (after a `forget`, it
    /// may hold forgotten events); a failure only costs the next process the catching up.
    private func save(_ state: CaughtUp, key: SchedulerKey, priorTag: UInt64, epochTag: UInt64?) async {
        guard savesSchedulers, let bytes = try? state.scheduler.savedState() else { return }
        let checkpoint = SchedulerCheckpoint(
            conditions: state.conditions, limitMicros: state.limitMicros, watermark: state.watermark, seen: state.seen,
            priorTag: priorTag, scheduler: bytes)
        if pendingCheckpoints != nil {
            pendingCheckpoints?.append((checkpoint, storageKey(key)))
            return
        }
        do {
            let saved = try await store.writeTransaction {
                guard try await epochIsCurrent(epochTag) else { return false }
                try await checkpoints.save([(checkpoint, storageKey(key))])
                return true
            }
            if saved { schedulersSaved += 1 }
        } catch {}
    }

    /// Whether the store's prior epoch is the one tagged `tag` (`nil`: a fold kept in memory only,
    /// never current).
    func epochIsCurrent(_ tag: UInt64?) async throws -> Bool {
        guard let tag else { return false }
        return try await priorEpoch(fold: try savedFold())?.tag == tag
    }

    /// A stored event as the model sees it.
    static func event(_ e: StoredEvent) -> DeviceEvent {
        DeviceEvent(
            time: Double(e.timeMicros) / 1_000_000, utcOffsetSeconds: e.utcOffsetSeconds,
            app: Int32(truncatingIfNeeded: e.app), kind: e.kind, result: e.result)
    }
}
