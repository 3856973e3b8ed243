import FetchCastCore
import FetchCastTrace

/// Adds trace files to a store, one transaction per file.
///
/// Every valid row becomes one row of `event_log`, rows repeated within the file included,
/// except a row whose event the store already held before the file (same device, instant, app,
/// kind, result, bytes, duration and conditions, whatever UTC offset: ``DuplicateFilter``), which
/// is skipped and counted unless ``IngestOptions/keepsDuplicates``. Idempotent per file: a file whose
/// SHA-256 the store already holds adds nothing. Strict by default: the first invalid row
/// aborts the file's transaction, so the file adds nothing.
public final class Ingestor {
    /// ``IngestOptions``, by its name before 0.7.
    @available(*, deprecated, renamed: "IngestOptions")
    public typealias Options = IngestOptions

    let store: Store
    let options: IngestOptions

    /// Creates an ingestor writing to `store`.
    public init(store: Store, options: IngestOptions = IngestOptions()) {
        self.store = store
        self.options = options
    }

    /// Ingests one file (`-` for standard input).
    ///
    /// - Parameters:
    ///   - path: The file, or `-`.
    ///   - name: The name the store records for the file (default: `path`), e.g. for a
    ///     request body spooled to a temporary file.
    /// - Returns: What happened.
    /// - Throws: ``TraceError`` for bad input (the store is left as it was before the file),
    ///   ``StoreError`` when the store fails.
    /// - Complexity: O(rows) time; memory O(devices × apps + device-days), not O(rows).
    /// Whether an ingest of a file of `bytes` bytes drops the history index (the (device, time)
    /// index every plan reads a device's history through) and builds it again before its
    /// commit, rather than inserting into it row by row: when a low estimate of the file's rows
    /// (``rowsAtLeast(bytes:gzip:)``) reaches the store's events. Inserted one by one, at as many
    /// places in the index as the file has devices, 2 M rows took 4.56 s against 1.73 s without
    /// the index; building it sorted took 1.1 s more (`fetchcast bench ingest`). Building costs
    /// O(the store's events), hence only for a file as large as the store. Unknown sizes (standard
    /// input) keep the index.
    func rebuildsHistoryIndex(bytes: Int64?, gzip: Bool) throws(StoreError) -> Bool {
        guard let bytes else { return false }
        return Self.rowsAtLeast(bytes: bytes, gzip: gzip) >= max(try store.lastEventID(), 1)
    }

    /// A low estimate of the rows of a trace of `bytes` bytes: short rows take about 30 bytes, 8
    /// gzipped (the development trace's take 69 and 8; the benchmark's 58 and 12).
    static func rowsAtLeast(bytes: Int64, gzip: Bool) -> Int64 { bytes / (gzip ? 16 : 80) }

    /// Builds the history index inside the ingest's transaction. Its sort spills to temporary
    /// files, not memory: with the store's `temp_store=MEMORY` the same build took 3.1 s and
    /// 139 MiB for 2 M rows, with files 1.1 s and 38 MiB. SQLite sizes its sorted runs by
    /// `cache_size` (2 MB by default), but never below 250 pages (1 MiB): runs that stay in the
    /// processor's cache, merged from the files, took 0.86–1.13 s of CPU against 1.03–1.18 s
    /// with 2 MB runs (`CREATE INDEX` on 2 M rows, three pairs alternated). The cache is
    /// ``sortRunKiB``, the smallest run: a smaller cache (it was 256 KiB) gives the same runs but
    /// evicts the index's newest leaves, which each split of the last leaf reads again from the
    /// WAL (2 M rows: 213 MiB of WAL reads against 176 MiB, sqlite3 3.40.1).
    private func buildHistoryIndex() throws(StoreError) {
        let c = store.connection
        let cacheSize = try c.scalarInt("PRAGMA cache_size")
        try c.execute("PRAGMA temp_store=FILE; PRAGMA cache_size=-\(Self.sortRunKiB)")
        defer { try? c.execute("PRAGMA temp_store=MEMORY; PRAGMA cache_size=\(cacheSize)") }
        try c.execute(Schema.createHistoryIndex)
    }

    /// The page cache while the history index is built, in KiB: SQLite's smallest sorted run.
    static let sortRunKiB = 1024

    public func ingest(path: String, name: String? = nil) throws -> FileIngestResult {
        let started = WallClock.monotonic()
        let c = store.connection
        let reader = try TraceReader(path: path, symbols: SymbolTable(), options: options.trace)
        let size = reader.size
        // The reader hashes the bytes as it parses them. A file as long as one the store holds
        // may be a re-ingest: it is hashed first, so that a duplicate is refused before any of
        // its rows is parsed, inserted or rejected (one extra read, only in that case).
        var knownHash: String?
        if let size, try existingFile(sizeBytes: size) {
            let hash = try RawInput.sha256(ofFile: path)
            if try existingFile(sha256: hash) {
                return FileIngestResult(path: path, sha256: hash, status: .alreadyIngested, events: 0, duplicates: 0, rejected: 0,
                                        bytes: 0, seconds: WallClock.monotonic() - started, format: "", gzip: false)
            }
            knownHash = hash
        }
        var source: EventSource<TraceReader>?
        func drain() {
            source?.cancel()
            source = nil
        }
        do {
            return try c.transaction(.immediate, storeError: { $0 }) { () throws -> FileIngestResult in
                if let knownHash, try existingFile(sha256: knownHash) {
                    throw AlreadyIngested(result: FileIngestResult(
                        path: path, sha256: knownHash, status: .alreadyIngested, events: 0, duplicates: 0, rejected: 0,
                        bytes: 0, seconds: WallClock.monotonic() - started, format: "", gzip: false))
                }
                // Rows whose events the store already holds are skipped (nil: none can be).
                let lastIDBefore = try store.lastEventID()
                var duplicates = options.keepsDuplicates ? nil : DuplicateFilter(connection: c, lastIDBefore: lastIDBefore)
                // A file about as large as the store or larger goes in without the history index,
                // which is built again, sorted, before the commit (see ``rebuildsHistoryIndex``);
                // not while duplicates are looked for in a store with events: they are read through it.
                var rebuildsIndex = try rebuildsHistoryIndex(bytes: size, gzip: reader.isGzip) && duplicates == nil
                if rebuildsIndex {
                    // SQLite refuses while a statement of this connection is still reading
                    // (`SQLITE_LOCKED`); then the rows go in through the index, as for a small file.
                    do { try c.execute("DROP INDEX IF EXISTS \(Schema.historyIndex)") } catch { rebuildsIndex = false }
                }
                let fileInsert = try c.prepare(
                    "INSERT INTO files(name, sha256, format, gzip, size_bytes, rows, rejected, ingested_at) VALUES (?, ?, '', 0, 0, 0, 0, ?)")
                try fileInsert.bind([.text(name ?? path), .text("pending:\(started)"), .text(Timestamp.format(micros: Int64(options.now() * 1_000_000), utcOffsetSeconds: 0))])
                try fileInsert.run()
                let fileID = c.lastInsertRowID
                var inserter = try EventLogInserter(connection: c, fileID: fileID)
                let names = NameResolver(connection: c)
                var symbolNames: [String] = []
                var deviceIDs: [Int64] = []
                var appIDs: [Int64] = []
                var aggregates = IngestAggregates()
                var events: Int64 = 0
                var rejected: Int64 = 0
                var lastProgress = started
                var finalHash = ""
                var finalBytes: Int64 = 0
                var format: TraceFormat?
                var gzip = false
                let parser = EventSource(reader, batchSize: 16384, capacity: 4, collectRejects: options.skipInvalid)
                source = parser
                receive: while true {
                    switch parser.next() {
                    case .failure(let error):
                        source = nil
                        throw error
                    case .end(let end):
                        source = nil
                        finalHash = end.sha256
                        finalBytes = end.bytesRead
                        format = end.format
                        gzip = end.isGzip
                        break receive
                    case .batch(let parsed):
                        let newNames = parsed.newNames, bytesRead = parsed.bytesRead
                        for r in parsed.rejects {
                            rejected += 1
                            options.onReject?(r.error, r.text)
                        }
                        if !newNames.isEmpty {
                            symbolNames.append(contentsOf: newNames)
                            deviceIDs.append(contentsOf: repeatElement(0, count: newNames.count))
                            appIDs.append(contentsOf: repeatElement(0, count: newNames.count))
                        }
                        let batch = try duplicates?.newEvents(parsed.events, names: symbolNames) ?? parsed.events
                        for e in batch {
                            let deviceID: Int64?
                            if e.device == EncodedEvent.everyDevice {
                                deviceID = nil
                            } else {
                                var id = deviceIDs[Int(e.device)]
                                if id == 0 {
                                    id = try names.id(table: "devices", name: symbolNames[Int(e.device)])
                                    deviceIDs[Int(e.device)] = id
                                }
                                deviceID = id
                            }
                            var appID = appIDs[Int(e.app)]
                            if appID == 0 {
                                appID = try names.id(table: "apps", name: symbolNames[Int(e.app)])
                                appIDs[Int(e.app)] = appID
                            }
                            try inserter.add(e, device: deviceID, app: appID)
                            aggregates.add(e)
                        }
                        // Each batch's rows are in the table before the next batch (at most 63 go
                        // in one by one here): a query between batches sees all of them.
                        try inserter.flush()
                        events += Int64(batch.count)
                        if let onProgress = options.onProgress {
                            let now = WallClock.monotonic()
                            if now - lastProgress >= 0.2 {
                                lastProgress = now
                                onProgress(IngestProgress(path: path, bytesRead: bytesRead, totalBytes: size,
                                                          events: events, seconds: now - started))
                            }
                        }
                    }
                }
                // One writer per transaction, so the file's events are the ids firstID...lastID.
                let firstID = inserter.firstID, lastID = inserter.lastID
                let hash = knownHash ?? finalHash
                if knownHash == nil, try existingFile(sha256: hash) {
                    throw AlreadyIngested(result: FileIngestResult(
                        path: path, sha256: hash, status: .alreadyIngested, events: 0, duplicates: 0, rejected: 0,
                        bytes: finalBytes, seconds: WallClock.monotonic() - started,
                        format: format?.rawValue ?? "", gzip: gzip))
                }
                let countInsert = try c.prepare(
                    "INSERT INTO file_counts(file_id, device_id, app_id, kind, n, first_us, last_us) VALUES (?,?,?,?,?,?,?)")
                for row in aggregates.countRows() {
                    try countInsert.bind([
                        .integer(fileID), row.device == EncodedEvent.everyDevice ? .null : .integer(deviceIDs[Int(row.device)]),
                        .integer(appIDs[Int(row.app)]), .integer(row.kind), .integer(row.count.n), .integer(row.count.first), .integer(row.count.last),
                    ])
                    try countInsert.run()
                }
                let dayInsert = try c.prepare("INSERT INTO file_days(file_id, device_id, day, launches) VALUES (?,?,?,?)")
                for row in aggregates.dayRows() {
                    try dayInsert.bind([.integer(fileID), .integer(deviceIDs[Int(row.device)]), .integer(Int64(row.day)), .integer(row.launches)])
                    try dayInsert.run()
                }
                let update = try c.prepare(
                    "UPDATE files SET sha256 = ?, format = ?, gzip = ?, size_bytes = ?, rows = ?, rejected = ?, first_event_id = ?, last_event_id = ? WHERE id = ?")
                try update.bind([
                    .text(hash), .text(format?.rawValue ?? "csv"), .integer(gzip ? 1 : 0), .integer(finalBytes),
                    .integer(events), .integer(rejected), firstID.map { .integer($0) } ?? .null,
                    lastID.map { .integer($0) } ?? .null,
                    .integer(fileID),
                ])
                try update.run()
                let skipped = duplicates?.skipped ?? 0
                if events == 0 && rejected == 0 && skipped == 0 && !options.recordsEmptyFiles {
                    // Rolled back below: nothing to record.
                    throw AlreadyIngested(result: FileIngestResult(
                        path: path, sha256: hash, status: .ingested, events: 0, duplicates: 0, rejected: 0, bytes: finalBytes,
                        seconds: WallClock.monotonic() - started, format: format?.rawValue ?? "csv", gzip: gzip))
                }
                if rebuildsIndex { try buildHistoryIndex() }
                return FileIngestResult(path: path, sha256: hash, status: .ingested, events: events, duplicates: skipped,
                                        rejected: rejected,
                                        bytes: finalBytes, seconds: WallClock.monotonic() - started,
                                        format: format?.rawValue ?? "csv", gzip: gzip)
            }
        } catch let duplicate as AlreadyIngested {
            // Rolled back: the store already holds these bytes.
            return duplicate.result
        } catch {
            drain()
            throw error
        }
    }

    /// Ends the transaction without a change: the file's hash is already in the store (or the
    /// file holds no row and empty files are not recorded).
    private struct AlreadyIngested: Error {
        var result: FileIngestResult
    }

    private func existingFile(sha256: String) throws(StoreError) -> Bool {
        try store.connection.scalarInt("SELECT count(*) FROM files WHERE sha256 = ?", [.text(sha256)]) > 0
    }

    private func existingFile(sizeBytes: Int64) throws(StoreError) -> Bool {
        try store.connection.scalarInt("SELECT count(*) FROM files WHERE size_bytes = ?", [.integer(sizeBytes)]) > 0
    }
}

/// Looks up or adds device and app names.
private struct NameResolver {
    let connection: Connection

    func id(table: String, name: String) throws(StoreError) -> Int64 {
        let insert = try connection.prepare("INSERT INTO \(table)(name) VALUES (?) ON CONFLICT(name) DO NOTHING")
        try insert.bind([.text(name)])
        try insert.run()
        return try connection.scalarInt("SELECT id FROM \(table) WHERE name = ?", [.text(name)])
    }
}
