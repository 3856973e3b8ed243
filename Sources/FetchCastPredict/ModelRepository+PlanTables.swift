import FetchCastModel
import FetchCastStore

/// Each device's plans kept ahead (``PlanTable``), so that a plan with default parameters reads
/// one small row instead of restoring and running the device's scheduler.
///
/// The warm-up (``keepSchedulersCurrent(request:batchSize:shouldStop:)``) saves a table per
/// device it catches up, under ``planTableKey(device:)``, recording the store's last event
/// and the prior epoch it read before planning. A table answers while it is exactly what
/// planning from the events would give: the same prior epoch (within an epoch a device's prior
/// changes only with its own events) and no event of the device, nor publish to every device,
/// added since. Otherwise the plan is made as before.
extension ModelRepository {
    /// Where a device's plan table is kept: `plans:ID:HASH`, the hash of the constants it was
    /// planned with (the default budget's scheduler configuration and the model's).
    func planTableKey(device: Int64) -> String {
        Self.planTablePrefix + "\(device):" + planTableHash
    }

    /// The start of every plan table's key.
    static let planTablePrefix = "plans:"

    /// The format of a saved table row: this version, the prior epoch's watermark and tag, then
    /// the table (``PlanTable/binaryEncoded()``); the row's watermark is the store's last event
    /// as of the planning. Version 3: planned with a habit's chance from 4 pseudo-days; version 4:
    /// with their chance placed within the hour (``HabitLog`` placement; older tables are planned
    /// again).
    static let planTableVersion = 4

    /// A saved row read in place (``planTableRecord(_:device:watermark:epoch:)``'s format): the
    /// prior epoch it was planned in and the table (``PlanTable/binaryEncoded()``, valid while
    /// `row` is); `nil` when the row is of another version or damaged.
    static func planTableRow(_ row: UnsafeRawBufferPointer) -> (epoch: PlanEpoch, table: UnsafeRawBufferPointer)? {
        var r = BinaryReader(row)
        guard (try? r.int()) == planTableVersion, let epochWatermark = try? r.uint64(), let epochTag = try? r.uint64(),
              let encoded = try? r.blob(), r.offset == row.count
        else { return nil }
        return (PlanEpoch(watermark: Int64(bitPattern: epochWatermark), tag: epochTag), encoded)
    }

    /// The table a saved row holds when the row is of this format and was planned in `epoch`;
    /// otherwise `nil`.
    static func planTable(_ row: [UInt8], epoch: PriorEpoch) -> [UInt8]? {
        row.withUnsafeBytes { bytes in
            guard let (planned, encoded) = planTableRow(bytes), planned == PlanEpoch(watermark: epoch.watermark, tag: epoch.tag)
            else { return nil }
            return Array(encoded)
        }
    }

    /// The row keeping `table` for `device`, planned from a snapshot read when the store's last
    /// event was `watermark` and the prior epoch was `epoch`.
    func planTableRecord(_ table: PlanTable, device: Int64, watermark: Int64, epoch: PriorEpoch) -> Store.ModelStateRecord {
        var w = BinaryWriter()
        w.int(Self.planTableVersion)
        w.uint64(UInt64(bitPattern: epoch.watermark))
        w.uint64(epoch.tag)
        w.blob(table.binaryEncoded())
        return Store.ModelStateRecord(key: planTableKey(device: device), watermark: watermark, state: w.bytes)
    }

    /// The plan `Predictor.predict(request, …)` would answer, from the device's saved table;
    /// `nil` when no valid table applies: a request with other than the default apps, budget or
    /// constraints, or a `notBefore` after `at`, a start not after the device's last event, or
    /// a table missing, damaged, of another prior epoch, or older than an event of the device.
    /// - Complexity: O(1) reads of small rows, and O(the device's events) at most to check
    ///   that none was added since (through the store's (device, time) index).
    package func precomputedPlan(_ request: PredictionRequest) throws -> [Prediction]? {
        try precomputedPlan(request, keeping: false)?.plan
    }

    /// ``precomputedPlan(_:)``, and a copy of the table it came from with what says whether it
    /// still answers (``KeptPlanTable``), for a process that keeps tables in memory.
    package func precomputedPlanKeeping(_ request: PredictionRequest) throws -> (plan: [Prediction], table: KeptPlanTable)? {
        guard let (plan, table) = try precomputedPlan(request, keeping: true), let table else { return nil }
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

    private func precomputedPlan(_ request: PredictionRequest, keeping: Bool) throws -> (plan: [Prediction], table: KeptPlanTable?)? {
        guard let (name, start) = Self.keptAhead(request) else { return nil }
        let known = namesCache?.deviceIDs[Array(name.utf8)]
        let keys = { (device: Int64) in [Self.watermarkKey, Self.epochKey, Self.warmMarkerKey, self.planTableKey(device: device)] }
        // A device already named: one statement on a server database, when its reads suffice
        // (they do unless names were added since); otherwise, and on SQLite, a read transaction.
        if let known, let plan = try store.withOneRead(keys: keys(known), device: known, {
            try planKeptAhead(name, from: start, count: request.count, keeping: keeping)
        }) {
            return plan
        }
        return try store.readTransaction { () throws -> (plan: [Prediction], table: KeptPlanTable?)? in
            // What follows reads these rows (and the last event's number, which the names are
            // checked against): one round trip on a server database.
            try store.prefetchModelStates(keys: known.map(keys) ?? [Self.watermarkKey, Self.epochKey, Self.warmMarkerKey], device: known)
            return try planKeptAhead(name, from: start, count: request.count, keeping: keeping)
        }
    }

    /// ``precomputedPlan(_:)``'s reads and checks, inside a read (or one statement's) snapshot.
    private func planKeptAhead(_ name: String, from start: Double, count: Int, keeping: Bool) throws
        -> (plan: [Prediction], table: KeptPlanTable?)?
    {
        guard let device = try names().deviceIDs[Array(name.utf8)] else { return nil }
        // Only the segment of `start` is decoded (a table holds one plan per pending look).
        let read = try store.withModelState(key: planTableKey(device: device)) {
            watermark, bytes -> (Int64, PlanEpoch, [Prediction]?, [UInt8]?)? in
            guard let (planned, encoded) = Self.planTableRow(bytes),
                  let plan = try? PlanTable.predictions(binary: encoded, device: name, from: start, count: count)
            else { return nil }
            return (watermark, planned, plan, keeping ? Array(encoded) : nil)
        }
        guard let (watermark, planned, found, encoded) = read ?? nil, let plan = found,
              let epoch = try priorEpoch(fold: try savedFold()), epoch.watermark == planned.watermark, epoch.tag == planned.tag
        else { return nil }
        let last = try store.lastEventID()
        guard watermark <= last else { return nil }  // events forgotten since
        // Events of the device after the table's watermark make it stale. A complete warm-up
        // pass of this epoch (its marker) gave every device with events up to the marker a new
        // table or none, so a table older than the marker only needs the events after it.
        var since = watermark
        if let marker = try warmMarker(), marker.epochWatermark == epoch.watermark, marker.epochTag == epoch.tag,
           marker.last > since, marker.last <= last
        {
            since = marker.last
        }
        if since < last, try store.hasEvents(ofDevice: device, afterID: since, beforeMicros: .max) { return nil }
        let table = encoded.map {
            KeptPlanTable(device: device, table: $0, since: since, watermark: watermark,
                          epoch: PlanEpoch(watermark: epoch.watermark, tag: epoch.tag), read: last)
        }
        return (plan, table)
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
    package func changesSince(_ last: Int64) throws -> PlanChanges? {
        try store.withChanges(afterID: last, keys: [Self.watermarkKey, Self.epochKey]) { touched in
            let epoch = try priorEpoch(fold: try savedFold())
            return PlanChanges(last: try store.lastEventID(), touched: touched,
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
/// with what says whether it still answers: while the prior epoch is `epoch`, the store holds
/// at least `watermark` events, and neither the device nor every device has events after `since`.
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
    /// What its device's empty-plan note reads of the device's latest model and that model's
    /// last observed time (Unix seconds), once a plan's note read them
    /// (``PlansInMemory/keepNote(_:device:table:)``): a note for a start after `seen` is theirs.
    package var note: (facts: EmptyPlanNote.Facts, seen: Double?)?

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
