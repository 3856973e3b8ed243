import FetchCastCore
import FetchCastTrace

/// The events added after an id, in id (ingest) order, of a range of devices: what a fold of
/// the models reads, as an ``EventProducer`` (the models read it through an ``EventSource``,
/// on the source's thread).
///
/// Its events are numbered with the store's ids, not symbols: `device` is `devices.id`
/// (``EncodedEvent/everyDevice`` for a publish to every device), `app` is `apps.id` and `line`
/// the event's id. It reads inside the caller's transaction: open one around the scan for a
/// snapshot, and touch the store no more until the source has ended.
///
/// - Complexity: O(events after the id) read by SQLite, streaming; memory one batch.
package final class IDOrderedScan {
    private let store: Store
    private var query: Statement?

    fileprivate init(store: Store, afterID: Int64, devices: ClosedRange<Int64>?) throws(StoreError) {
        let columns = "SELECT \(Store.storedEventColumns) FROM event_log"
        let s: Statement
        if let devices {
            s = try store.connection.prepare(columns + " WHERE id > ? AND (device_id IS NULL OR device_id BETWEEN ? AND ?) ORDER BY id")
            try s.bind([.integer(afterID), .integer(devices.lowerBound), .integer(devices.upperBound)])
        } else {
            s = try store.connection.prepare(columns + " WHERE id > ? ORDER BY id")
            try s.bind([.integer(afterID)])
        }
        self.store = store
        query = s
    }

    /// Appends the next events to `batch`: at most `maxCount`.
    /// - Returns: `false` once every event was handed out.
    /// - Throws: ``StoreError`` when SQLite fails, a row has a kind or result this build does
    ///   not know, or an id too large for an event's 32-bit device or app number.
    func fill(_ batch: inout [EncodedEvent], maxCount: Int) throws(StoreError) -> Bool {
        guard let s = query else { return false }
        while batch.count < maxCount {
            guard try s.step() else {
                query = nil
                return false
            }
            let id = s.int(0)
            let device: Int32
            if let d = s.optionalInt(3) {
                guard let narrow = Int32(exactly: d), narrow >= 0 else {
                    throw .unknownValue(path: store.path, table: "event_log", row: id, column: "device_id", value: d)
                }
                device = narrow
            } else {
                device = EncodedEvent.everyDevice
            }
            guard let app = Int32(exactly: s.int(4)) else {
                throw .unknownValue(path: store.path, table: "event_log", row: id, column: "app_id", value: s.int(4))
            }
            batch.append(EncodedEvent(
                timeMicros: s.int(1), utcOffsetSeconds: Int32(truncatingIfNeeded: s.int(2)), device: device, app: app,
                kind: try store.kind(s.int(5), row: id),
                result: try s.optionalInt(6).map { v throws(StoreError) in try store.result(v, row: id) },
                bytes: s.optionalInt(7), durationMs: s.optionalInt(8), line: id, conditions: try store.conditions(s, from: 9, row: id)))
        }
        return true
    }
}

extension IDOrderedScan: EventProducer {
    package var symbolTable: SymbolTable? { nil }  // ids, not symbols

    package func next(into batch: inout [EncodedEvent], maxCount: Int, onInvalid: ((TraceError, String) -> Void)?) throws(StoreError) -> Bool {
        try fill(&batch, maxCount: maxCount)
    }

    package var batchFile: String? { nil }

    package var bytesRead: Int64 { 0 }

    /// Lets go of the statement (on the thread that stepped it).
    package func finish() { query = nil }
}

extension Store {
    /// The events with id greater than `afterID` whose device id is in `devices` or that have
    /// no device (publishes to every device), in id order; every event when `devices` is
    /// `nil`. Read it through an ``EventSource`` inside a transaction (see ``IDOrderedScan``).
    /// - Throws: ``StoreError`` when the query cannot be prepared.
    package func idOrderedScan(afterID: Int64 = 0, devices: ClosedRange<Int64>? = nil) throws(StoreError) -> IDOrderedScan {
        try IDOrderedScan(store: self, afterID: afterID, devices: devices)
    }

    /// Calls `body` for every event with id greater than `afterID` (of the devices in
    /// `devices` and publishes to every device, when given), in id order, on this thread: the
    /// ``IDOrderedScan`` read in place, for tests and small reads.
    /// - Complexity: O(events after `afterID`), streaming.
    package func scanEvents(afterID: Int64 = 0, devices: ClosedRange<Int64>? = nil, _ body: (StoredEvent) throws -> Void) throws {
        let scan = try idOrderedScan(afterID: afterID, devices: devices)
        var batch: [EncodedEvent] = []
        var more = true
        while more {
            batch.removeAll(keepingCapacity: true)
            more = try scan.fill(&batch, maxCount: 1024)
            for e in batch {
                try body(StoredEvent(
                    id: e.line, timeMicros: e.timeMicros, utcOffsetSeconds: e.utcOffsetSeconds,
                    device: e.device == EncodedEvent.everyDevice ? nil : Int64(e.device), app: Int64(e.app), kind: e.kind,
                    result: e.result, bytes: e.bytes, durationMs: e.durationMs, conditions: e.conditions))
            }
        }
    }
}

extension Store {
    /// The ``IDOrderedScan`` read through an ``EventSource`` (on the source's thread, 4096
    /// events a batch, 4 ahead), inside the caller's transaction: the fold's read. The store
    /// is not touched again until the scan has ended or stopped.
    /// - Complexity: O(events after `afterID`) read by SQLite, streaming.
    package func forEachEvent(afterID: Int64, devices: ClosedRange<Int64>, _ batches: ([EncodedEvent]) throws -> Void) throws {
        let source = EventSource(try idOrderedScan(afterID: afterID, devices: devices), batchSize: 4096, capacity: 4)
        _ = try source.forEachBatch { batch in try batches(batch.events) }
    }
}
