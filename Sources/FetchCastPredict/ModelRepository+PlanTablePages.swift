import FetchCastStore

/// Plan tables read a page at a time, for a process that keeps them in memory and loads them at
/// once rather than each on its device's first plan (``PlansInMemory/preload(check:page:shouldStop:)``).
extension ModelRepository {
    /// A page of tables that answer as of now, with what says how long they answer, and where
    /// the next page starts (`nil`: no more).
    package struct PlanTablePage: Sendable {
        package var tables: [(name: String, table: KeptPlanTable)] = []
        package var next: String?
    }

    /// The plan tables of the default request after the key `after`, at most `limit` rows read,
    /// each with what says whether it still answers (``KeptPlanTable``), from one read snapshot.
    ///
    /// Only while a complete warm-up pass of the present prior epoch is recorded (its marker):
    /// the pass gave every device with events up to the marker a new table or none, so a table
    /// answers unless its device, or every device, has events after the marker (or after the
    /// table, when it is newer). Those devices' tables are left out, not checked one by one;
    /// without such a marker the page is empty. What it returns is what
    /// ``precomputedPlanKeeping(_:)`` returns for each of them, device by device.
    /// - Complexity: one range of the state's key index, and the devices of the files since the
    ///   marker (none once the pass is current).
    package func planTablePage(after: String?, limit: Int) async throws -> PlanTablePage {
        try await store.readTransaction {
            let last = try await store.lastEventID()
            guard let epoch = try await priorEpoch(fold: try savedFold()), let marker = try await warmMarker(),
                  marker.epochWatermark == epoch.watermark, marker.epochTag == epoch.tag, marker.last <= last
            else { return PlanTablePage() }
            let changed = try await store.devicesWithEvents(afterID: marker.last)
            guard !changed.everyDevice else { return PlanTablePage() }
            let stale = Set(changed.devices)
            let rows = try await store.modelStates(prefix: Self.planTablePrefix, after: after, limit: limit)
            let names = try await names()
            let suffix = ":" + planTableHash
            var page = PlanTablePage(next: rows.count < limit ? nil : rows.last?.key)
            for row in rows where row.key.hasSuffix(suffix) && row.watermark <= last {
                let id = row.key.dropFirst(Self.planTablePrefix.count).dropLast(suffix.count)
                guard let device = Int64(id), !stale.contains(device), let name = names.devices[device],
                      let (encoded, note) = Self.planTable(row.state, epoch: epoch)
                else { continue }
                let table = KeptPlanTable(device: device, table: encoded, since: max(row.watermark, marker.last), watermark: row.watermark,
                                          epoch: PlanEpoch(watermark: epoch.watermark, tag: epoch.tag), read: last, note: note)
                page.tables.append((name, table))
            }
            return page
        }
    }
}
