import Synchronization

/// Devices' `device_id`s (``NameID``) by their `seq`, shared by a process's connections to one
/// database: what keys a device's model state in `device_state` (sharded by `device_id`), from
/// the `seq` the model layer names devices by.
///
/// A `seq` names one device for good (devices are never renumbered, and their rows are never
/// deleted, even by `forget`), so what was read once stays true. Seqs may have gaps (a number
/// taken by an ingest that rolled back, or by one not yet committed), so a `seq` not held is
/// never taken to have no device: it is read again when asked.
final class DeviceIDsBySeq: Sendable {
    /// `device_id` by `seq` (0: not held).
    private let ids = Mutex<[Int64]>([0])

    /// The `device_id` of `seq`, `nil` when not held.
    func id(of seq: Int64) -> Int64? {
        ids.withLock { ids in
            guard seq > 0, seq < ids.count, ids[Int(seq)] != 0 else { return nil }
            return ids[Int(seq)]
        }
    }

    /// The largest `seq` held (0 when none).
    var highest: Int64 {
        ids.withLock { Int64($0.count - 1) }
    }

    /// Keeps what was read.
    func add(_ rows: [(seq: Int64, id: Int64)]) {
        ids.withLock { ids in
            let end = Int(rows.map(\.seq).max() ?? 0)
            if end >= ids.count { ids.append(contentsOf: repeatElement(0, count: end + 1 - ids.count)) }
            for row in rows where row.seq > 0 { ids[Int(row.seq)] = row.id }
        }
    }
}
