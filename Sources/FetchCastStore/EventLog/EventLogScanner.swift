import FetchCastCore
import FetchCastTrace

/// What the readers of the events themselves ask of an event log, whatever engine holds it:
/// `fetchcast export events` (rows of the `events` view) and `fetchcast evaluate` without a
/// trace (every event, in time order, for the replay).
///
/// Each scan reads one snapshot and streams: an engine hands the rows to `body` as it reads
/// them, never holding every event. The order is time, then ingest order within one instant:
/// `(time_us, file, line)`, which on SQLite is also `(time_us, id)` (an event's id follows
/// its file and line). Nothing here names SQL or an engine's types.
///
/// Package-wide, not public: it trades in the pipeline's own types (``EventRow``,
/// ``EncodedEvent``, ``SymbolTable``).
package protocol EventLogScanner: EventLogReader {
    /// Whether the log holds any `state` row (read from the per-file aggregates): `export
    /// events` adds the condition columns only then.
    /// - Throws: ``StoreError`` when the engine fails.
    func hasStateRows() async throws -> Bool

    /// Calls `body` for each row of the `events` view that passes `filter`, in time order
    /// (ties by file, then line), from one snapshot.
    /// - Parameters:
    ///   - filter: Device, app and time range to keep.
    ///   - body: Called once per row; an error it throws stops the scan and is rethrown as it was.
    /// - Throws: ``StoreError`` when the engine fails, or what `body` throws.
    /// - Complexity: O(n log n) in the events kept (the engine's sort); memory O(1) rows here.
    func scanEventRows(_ filter: EventFilter, _ body: (EventRow) throws -> Void) async throws

    /// Reads every event in time order (ties by file, then line), from one snapshot, as the
    /// replay reads a trace: ``EncodedEvent`` batches whose device and app symbols are names in
    /// `symbols`.
    ///
    /// Every device name, then every app name, is interned into `symbols` first; then `files`
    /// is called once with the ingested files in ingest order; then `batches` with each batch
    /// (at most 8192 events, all from one file) and that file's name. Publishes to every device
    /// carry ``EncodedEvent/everyDevice``. Only the events' instant, offset, device, app, kind,
    /// result, line and conditions are read (not bytes or durations).
    /// - Parameters:
    ///   - symbols: The table the events' symbols refer to.
    ///   - devices: Only these devices' events and the publishes to every device (every device
    ///     when `nil`), matched by name byte for byte. Every device's name is interned either way.
    ///   - files: Called with the ingested files, before the first batch.
    ///   - batches: Called with each batch and the name of its file; an error it throws stops
    ///     the scan and is rethrown as it was.
    /// - Throws: ``StoreError`` when the engine fails or a row holds a value this build does
    ///   not know, or what `files` or `batches` throws.
    /// - Complexity: O(n log n) in the events kept; memory O(devices + apps + files) plus a batch.
    func scanTimeOrdered(
        symbols: SymbolTable, devices: DeviceIDs?, files: ([TimeOrderedScan.File]) throws -> Void,
        batches: (_ events: [EncodedEvent], _ file: String) throws -> Void
    ) async throws
}

extension Store: EventLogScanner {
    /// Reads ``timeOrderedScan(symbols:devices:)`` through an ``EventSource`` (on the source's
    /// thread, 8192 events a batch, 8 batches ahead), as the replay always read the store.
    package func scanTimeOrdered(
        symbols: SymbolTable, devices: DeviceIDs?, files: ([TimeOrderedScan.File]) throws -> Void,
        batches: (_ events: [EncodedEvent], _ file: String) throws -> Void
    ) throws {
        let scan = try timeOrderedScan(symbols: symbols, devices: devices)
        do {
            try files(scan.files)
        } catch {
            scan.finish()
            throw error
        }
        let source = EventSource(scan, batchSize: 8192, capacity: 8)
        while true {
            switch source.next() {
            case .batch(let batch):
                do {
                    try batches(batch.events, batch.file ?? "store")
                } catch {
                    source.cancel()
                    throw error
                }
            case .end: return
            case .failure(let error): throw error
            }
        }
    }
}
