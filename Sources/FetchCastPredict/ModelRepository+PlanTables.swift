import FetchCastModel
import FetchCastStore

/// Each device's plans kept ahead (``PlanTable``), so that a plan with default parameters reads
/// one small row instead of restoring and running the device's scheduler.
///
/// The warm-up (``keepSchedulersCurrent(request:batchSize:shouldStop:)``) saves a table per
/// device it catches up, under ``planTableKey(device:)``, recording the store's last event
/// and the prior epoch it read before planning. A table answers by the one rule written at
/// ``KeptPlanTable`` (read here from the store, in ``PlansInMemory`` from its checks);
/// otherwise the plan is made as before.
extension ModelRepository {
    /// Where a device's plan table is kept: `plans:ID:HASH`, the hash of the constants it was
    /// planned with (the default budget's scheduler configuration and the model's).
    func planTableKey(device: Int64) -> String {
        Self.planTablePrefix + "\(device):" + planTableHash
    }

    /// The start of every plan table's key.
    static let planTablePrefix = "plans:"

    /// The format of a saved table row: this version, the prior epoch's watermark and tag, the
    /// table (``PlanTable/binaryEncoded()``), then whether the note's facts follow and
    /// ``EmptyPlanNote/Facts`` of the model it was planned from; the row's watermark is the store's
    /// last event as of the planning. Version 3: planned with a habit's chance from 4 pseudo-days;
    /// version 4: with their chance placed within the hour (``HabitLog`` placement; older tables
    /// are planned again); version 5: the note's facts (a row of version 4 is read without them).
    static let planTableVersion = 5

    /// A saved row read in place (``planTableRecord(_:device:watermark:epoch:note:)``'s format):
    /// the prior epoch it was planned in, the table (``PlanTable/binaryEncoded()``, valid while
    /// `row` is) and the note's facts; `nil` when the row is of another version or damaged.
    static func planTableRow(_ row: UnsafeRawBufferPointer) -> (epoch: PlanEpoch, table: UnsafeRawBufferPointer, note: EmptyPlanNote.Facts?)? {
        var r = BinaryReader(row)
        guard let version = try? r.int(), version == planTableVersion || version == 4,
              let epochWatermark = try? r.uint64(), let epochTag = try? r.uint64(), let encoded = try? r.blob()
        else { return nil }
        var note: EmptyPlanNote.Facts?
        if version == planTableVersion {
            guard let noted = try? r.bool() else { return nil }
            if noted { guard let facts = try? EmptyPlanNote.Facts(from: &r) else { return nil }; note = facts }
        }
        guard r.offset == row.count else { return nil }
        return (PlanEpoch(watermark: Int64(bitPattern: epochWatermark), tag: epochTag), encoded, note)
    }

    /// The table a saved row holds, and its note's facts, when the row is of this format and
    /// was planned in `epoch`; otherwise `nil`.
    static func planTable(_ row: [UInt8], epoch: PriorEpoch) -> (table: [UInt8], note: EmptyPlanNote.Facts?)? {
        row.withUnsafeBytes { bytes in
            guard let (planned, encoded, note) = planTableRow(bytes), planned == PlanEpoch(watermark: epoch.watermark, tag: epoch.tag)
            else { return nil }
            return (Array(encoded), note)
        }
    }

    /// The row keeping `table` for `device`, planned from a snapshot read when the store's last
    /// event was `watermark` and the prior epoch was `epoch`, with the note's facts of the
    /// device's model in that snapshot.
    func planTableRecord(_ table: PlanTable, device: Int64, watermark: Int64, epoch: PriorEpoch, note: EmptyPlanNote.Facts?) -> Store.ModelStateRecord {
        var w = BinaryWriter()
        w.int(Self.planTableVersion)
        w.uint64(UInt64(bitPattern: epoch.watermark))
        w.uint64(epoch.tag)
        w.blob(table.binaryEncoded())
        w.bool(note != nil)
        note?.encode(into: &w)
        return Store.ModelStateRecord(key: planTableKey(device: device), watermark: watermark, state: w.bytes)
    }

    /// The plan `Predictor.predict(request, …)` would answer, from the device's saved table;
    /// `nil` when no valid table applies: a request with other than the default apps, budget or
    /// constraints, or a `notBefore` after `at`, a start not after the device's last event, or
    /// a table missing, damaged, of another prior epoch, or older than an event of the device.
    /// - Complexity: O(1) reads of small rows, and O(the device's events) at most to check
    ///   that none was added since (through the store's (device, time) index).
    package func precomputedPlan(_ request: PredictionRequest) async throws -> [Prediction]? {
        try await precomputedPlan(request, keeping: false)?.plan
    }

    /// ``precomputedPlan(_:)`` and the note's facts its table keeps (`nil` for a table of
    /// format 4), for a plan answered with its note.
    package func precomputedPlanNoting(_ request: PredictionRequest) async throws -> (plan: [Prediction], note: EmptyPlanNote.Facts?)? {
        try await precomputedPlan(request, keeping: false).map { ($0.plan, $0.note) }
    }

    /// ``precomputedPlan(_:)``, and a copy of the table it came from with what says whether it
    /// still answers (``KeptPlanTable``), for a process that keeps tables in memory.
    package func precomputedPlanKeeping(_ request: PredictionRequest) async throws -> (plan: [Prediction], table: KeptPlanTable)? {
        guard let (plan, table, _) = try await precomputedPlan(request, keeping: true), let table else { return nil }
        return (plan, table)
    }

    /// The device's name and the start of `request` when a plan table answers it: the request
    /// tables are kept for (a device's default apps, budget and constraints), with a device
    /// and a start, and no `notBefore` after the start. Otherwise `nil`.
    package static func keptAhead(_ request: PredictionRequest) -> (device: String, start: Double)? {
        guard let name = request.device, let start = request.at, PlanTable.keeps(request), (request.notBefore ?? start) <= start
        else { return nil }
        return (name, start)
    }

    private func precomputedPlan(_ request: PredictionRequest, keeping: Bool) async throws
        -> (plan: [Prediction], table: KeptPlanTable?, note: EmptyPlanNote.Facts?)?
    {
        guard let (name, start) = Self.keptAhead(request) else { return nil }
        let known = namesCache?.deviceIDs[Array(name.utf8)]
        let keys = { (device: Int64) in [Self.watermarkKey, Self.epochKey, Self.warmMarkerKey, self.planTableKey(device: device)] }
        // A device already named: one statement on a server database, when its reads suffice
        // (they do unless names were added since); otherwise, and on SQLite, a read transaction.
        if let known, let plan = try await store.withOneRead(keys: keys(known), device: known, {
            try await planKeptAhead(name, from: start, count: request.count, keeping: keeping)
        }) {
            return plan
        }
        return try await store.readTransaction { () throws -> (plan: [Prediction], table: KeptPlanTable?, note: EmptyPlanNote.Facts?)? in
            // What follows reads these rows (and the last event's number, which the names are
            // checked against): one round trip on a server database.
            try await store.prefetchModelStates(keys: known.map(keys) ?? [Self.watermarkKey, Self.epochKey, Self.warmMarkerKey], device: known)
            return try await planKeptAhead(name, from: start, count: request.count, keeping: keeping)
        }
    }

    /// ``precomputedPlan(_:)``'s reads and checks, inside a read (or one statement's) snapshot.
    private func planKeptAhead(_ name: String, from start: Double, count: Int, keeping: Bool) async throws
        -> (plan: [Prediction], table: KeptPlanTable?, note: EmptyPlanNote.Facts?)?
    {
        guard let device = try await names().deviceIDs[Array(name.utf8)] else { return nil }
        // Only the segment of `start` is decoded (a table holds one plan per pending look).
        let read = try await store.withModelState(key: planTableKey(device: device)) {
            watermark, bytes -> (Int64, PlanEpoch, [Prediction]?, [UInt8]?, EmptyPlanNote.Facts?)? in
            guard let (planned, encoded, note) = Self.planTableRow(bytes),
                  let plan = try? PlanTable.predictions(binary: encoded, device: name, from: start, count: count)
            else { return nil }
            return (watermark, planned, plan, keeping ? Array(encoded) : nil, note)
        }
        guard let (watermark, planned, found, encoded, note) = read ?? nil, let plan = found,
              let epoch = try await priorEpoch(fold: try savedFold()), epoch.watermark == planned.watermark, epoch.tag == planned.tag
        else { return nil }
        let last = try await store.lastEventID()
        guard watermark <= last else { return nil }  // events forgotten since
        // Events of the device after the table's watermark make it stale. A complete warm-up
        // pass of this epoch (its marker) gave every device with events up to the marker a new
        // table or none, so a table older than the marker only needs the events after it.
        var since = watermark
        if let marker = try await warmMarker(), marker.epochWatermark == epoch.watermark, marker.epochTag == epoch.tag,
           marker.last > since, marker.last <= last
        {
            since = marker.last
        }
        if since < last, try await store.hasEvents(ofDevice: device, afterID: since, beforeMicros: .max) { return nil }
        let table = encoded.map {
            KeptPlanTable(device: device, table: $0, since: since, watermark: watermark,
                          epoch: PlanEpoch(watermark: epoch.watermark, tag: epoch.tag), read: last, note: note)
        }
        return (plan, table, note)
    }

    /// What a process keeping plan tables in memory asks the store before it answers from them
    /// (``changesSince(_:)``).
    package struct PlanChanges: Sendable, Equatable {
        /// The store's last event's number.
        package var last: Int64
        /// For each device with events in files from the asked number on (0: every device),
        /// the largest first event of such a file (``ModelStore/withChanges(afterID:keys:_:)``).
        package var touched: [Int64: Int64]
        /// The prior epoch, if the store has one.
        package var epoch: PlanEpoch?
    }

    /// What changed since the store's last event was `last`, in one statement: `nil` when the
    /// store does not answer so (SQLite: a read costs nothing there, nothing to keep in memory).
    package func changesSince(_ last: Int64) async throws -> PlanChanges? {
        try await store.withChanges(afterID: last, keys: [Self.watermarkKey, Self.epochKey]) { touched in
            let epoch = try await priorEpoch(fold: try savedFold())
            return await PlanChanges(last: try store.lastEventID(), touched: touched,
                               epoch: epoch.map { PlanEpoch(watermark: $0.watermark, tag: $0.tag) })
        }
    }
}

/// A prior epoch as plan tables name it: the watermark of the fold that started it and the
/// tag of its sums.
package struct PlanEpoch: Sendable, Hashable {
    package var watermark: Int64
    package var tag: UInt64
}

/// A device's plan table as read from the store (``ModelRepository/precomputedPlanKeeping(_:)``),
/// with what says whether it still answers.
///
/// **The rule** (the one place it is written; docs/serve.md, "Plans kept ahead", explains it): a
/// table answers a request plan tables keep (``ModelRepository/keptAhead(_:)``) exactly while it
/// is what planning from the events would give, that is while
/// - the prior epoch is the one it was planned in, `epoch` (within an epoch a device's prior
///   changes only with its own events),
/// - the store still holds the `watermark` events it was planned with (none forgotten since), and
/// - neither its device nor every device (a publish) has an event after `since`: the store's
///   last event when it was planned, or the last a complete warm-up pass of the epoch vouched for.
///
/// The store's read checks it in one snapshot (``ModelRepository/precomputedPlan(_:)``); a process
/// keeping tables in memory checks it against what its checks of the store found
/// (``PlansInMemory``). Anything else is planned from the device's scheduler.
package struct KeptPlanTable: Sendable {
    /// The device's id.
    package var device: Int64
    /// The table (``PlanTable/binaryEncoded()``).
    package var table: [UInt8]
    /// The table answers while the device (and every device) has no event after this.
    package var since: Int64
    /// The store's last event when the table was planned.
    package var watermark: Int64
    /// The prior epoch it was planned in.
    package var epoch: PlanEpoch
    /// The store's last event when the table was read.
    package var read: Int64
    /// What its device's empty-plan note reads of the model it was planned from: saved with the
    /// table by the warm-up, or (a table of format 4) kept once a plan's note read them
    /// (``PlansInMemory/keepNote(_:device:table:)``).
    package var note: EmptyPlanNote.Facts?

    /// Whether `other` is this table as read once (a note kept with one is of the other).
    package func isSame(as other: KeptPlanTable) -> Bool {
        (device, since, watermark, epoch, read) == (other.device, other.since, other.watermark, other.epoch, other.read)
    }

    /// The plan from `start` (``PlanTable/predictions(binary:device:from:count:)``); `nil` when
    /// the table does not cover `start`.
    package func predictions(device name: String, from start: Double, count: Int) -> [Prediction]? {
        table.withUnsafeBytes { (try? PlanTable.predictions(binary: $0, device: name, from: start, count: count)) ?? nil }
    }
}
