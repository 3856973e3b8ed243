/// What `stats`, `devices` and the other readers of an event log ask of it, whatever engine
/// holds it (the embedded SQLite ``Store``, or a PostgreSQL database).
///
/// Nothing here names SQL, statements or an engine's types: an engine answers with the same
/// records (``StoreStats``, ``DeviceSummary``) from its own tables.
public protocol EventLogReader: AnyObject {
    /// Where the log is, for messages and the `store` row of `fetchcast stats`: a file path, or
    /// a URL without its password.
    var location: String { get }

    /// The log's contents at a glance, read in one snapshot from the aggregates kept at ingest.
    /// - Throws: ``StoreError`` when the engine fails.
    /// - Complexity: O(files × devices × apps), independent of the number of events.
    func stats() async throws -> StoreStats

    /// Every device with its counts, span and `top` most launched apps, in device name order
    /// (byte order).
    /// - Parameter top: How many of each device's most launched apps to list (0 for none).
    /// - Throws: ``StoreError`` when the engine fails.
    func devices(top: Int) async throws -> [DeviceSummary]

    /// Every device name, in byte order; names that only look alike (case, Unicode
    /// normalisation, trailing space) are distinct.
    /// - Throws: ``StoreError`` when the engine fails.
    func sortedDeviceNames() async throws -> [String]

    /// Every app name, in byte order, the empty app of `state` rows included when stored.
    /// - Throws: ``StoreError`` when the engine fails.
    func sortedAppNames() async throws -> [String]

    /// How many files (batches) the log records.
    /// - Throws: ``StoreError`` when the engine fails.
    func fileCount() async throws -> Int64

    /// Every file (batch) the log records, oldest first (in the order ingested), as
    /// `fetchcast files` lists them.
    /// - Throws: ``StoreError`` when the engine fails.
    func files() async throws -> [StoredFile]

    /// Ends the engine's connection, if it holds one. Calls after it fail.
    func close() async
}

/// An event log that trace files can be appended to.
public protocol EventLogWriter: EventLogReader {
    /// Appends one trace file as one batch: one transaction, one file record keyed by the
    /// SHA-256 of the file's bytes.
    ///
    /// The same bytes again add nothing and come back as
    /// ``FileIngestResult/Status-swift.enum/alreadyIngested``. A file with a bad row (without
    /// ``IngestOptions/skipInvalid``) or an engine failure leaves the log exactly as it was.
    /// - Parameters:
    ///   - path: The file, or `-` for standard input.
    ///   - name: The name recorded for the file (default: `path`).
    ///   - options: How rows are read and reported.
    /// - Returns: What happened.
    /// - Throws: `TraceError` for bad input, ``StoreError`` when the engine fails.
    /// - Complexity: O(rows) time; memory O(devices × apps + device-days), not O(rows).
    func append(path: String, name: String?, options: IngestOptions) async throws -> FileIngestResult

    /// Removes one file's events, aggregates and record, and all learned model state (rebuilt
    /// from the remaining events on next use), in one transaction; device and app names stay.
    ///
    /// The file is named as ``StoredFile/matching(_:in:location:)`` says: by path as ingested,
    /// full SHA-256 or a unique hash prefix of at least 8 digits. The other files' events keep
    /// their numbers; a file ingested later takes the id after the largest remaining file id
    /// and numbers its events from one after the largest remaining event number, on both
    /// engines (SQLite's rowids without `AUTOINCREMENT`): forgetting the last file frees its
    /// numbers for the next one.
    /// - Parameter fileOrHash: The file's path as ingested, its SHA-256 or a prefix of it.
    /// - Returns: The file removed.
    /// - Throws: ``StoreError`` when nothing or more than one file matches (the log is left as
    ///   it was), or when the engine fails.
    func forget(_ fileOrHash: String) async throws -> StoredFile
}

extension EventLogReader {
    /// Nothing to end (an engine without a connection of its own).
    public func close() async {}
}
