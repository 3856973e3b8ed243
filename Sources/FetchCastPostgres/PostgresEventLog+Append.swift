import FetchCastCore
import FetchCastStore
import FetchCastTrace
import PostgresNIO

extension PostgresEventLog {
    /// Appends one trace file in one transaction: its names (`INSERT … ON CONFLICT DO NOTHING`
    /// from bound arrays), its events and per-file aggregates (`COPY … FROM STDIN`, text
    /// format, integers only), then its `files` row keyed by the SHA-256 of its bytes.
    ///
    /// Appends to one database take turns (an advisory lock held to the commit), as SQLite's
    /// do; readers are never blocked. A file whose hash the database holds adds nothing; a bad
    /// row (without ``Ingestor/Options/skipInvalid``) or a failure rolls everything back.
    ///
    /// Rows whose events the database already holds from another file are added again (as
    /// SQLite's `--keep-duplicates` does): this engine does not look for them yet.
    /// - Complexity: O(rows) time; memory O(devices × apps + device-days), not O(rows).
    public func append(path: String, name: String?, options: Ingestor.Options) async throws -> FileIngestResult {
        let started = WallClock.monotonic()
        let reader = try TraceReader(path: path, symbols: SymbolTable(), options: options.trace)
        let size = reader.size
        // A file as long as one the database holds may be a re-ingest: hashed first, so that a
        // duplicate is refused before any of its rows is parsed or rejected.
        var knownHash: String?
        if let size, try await fileExists(sizeBytes: size) {
            let hash = try RawInput.sha256(ofFile: path)
            if try await fileExists(sha256: hash) {
                return FileIngestResult(path: path, sha256: hash, status: .alreadyIngested, events: 0, duplicates: 0, rejected: 0,
                                        bytes: 0, seconds: WallClock.monotonic() - started, format: "", gzip: false)
            }
            knownHash = hash
        }
        let source = EventSource(reader, batchSize: 16384, capacity: 4, collectRejects: options.skipInvalid)
        let known = knownHash
        do {
            return try await transaction { c in
                var sourceEnded = false
                do {
                    let result = try await self.append(
                        from: source, sourceEnded: &sourceEnded, path: path, name: name, knownHash: known, size: size,
                        options: options, started: started, on: c)
                    return result
                } catch {
                    if !sourceEnded { source.cancel() }
                    throw error
                }
            }
        } catch let duplicate as AlreadyIngested {
            return duplicate.result
        }
    }

    /// The body of ``append(path:name:options:)``, inside its transaction.
    private func append(
        from source: EventSource<TraceReader>, sourceEnded: inout Bool, path: String, name: String?, knownHash: String?,
        size: Int64?, options: Ingestor.Options, started: Double, on c: PostgresConnection
    ) async throws -> FileIngestResult {
        try await c.query("SELECT pg_advisory_xact_lock(\(PostgresSchema.appendLock))", logger: logger)
        if let knownHash, try await fileExists(sha256: knownHash, on: c) {
            sourceEnded = true
            source.cancel()
            throw AlreadyIngested(result: FileIngestResult(
                path: path, sha256: knownHash, status: .alreadyIngested, events: 0, duplicates: 0, rejected: 0,
                bytes: 0, seconds: WallClock.monotonic() - started, format: "", gzip: false))
        }
        let fileID = try await scalar("SELECT nextval('file_ids')", on: c)
        var symbolNames: [String] = []
        var deviceIDs: [Int64] = []
        var appIDs: [Int64] = []
        var aggregates = IngestAggregates()
        var events: Int64 = 0
        var rejected: Int64 = 0
        var lastProgress = started
        var summary: TraceReader.Summary?
        var rows = ByteBuffer()
        receive: while true {
            switch source.next() {
            case .failure(let error):
                sourceEnded = true
                throw error
            case .end(let end):
                sourceEnded = true
                summary = end
                break receive
            case .batch(let parsed):
                for r in parsed.rejects {
                    rejected += 1
                    options.onReject?(r.error, r.text)
                }
                if !parsed.newNames.isEmpty {
                    symbolNames.append(contentsOf: parsed.newNames)
                    deviceIDs.append(contentsOf: repeatElement(0, count: parsed.newNames.count))
                    appIDs.append(contentsOf: repeatElement(0, count: parsed.newNames.count))
                }
                // The batch's names not yet given an id: stored before its rows.
                // In the order of their first event, which numbers them (`seq`) as SQLite does.
                var newDevices: [(id: Int64, name: String)] = []
                var newApps: [(id: Int64, name: String)] = []
                for e in parsed.events {
                    if e.device != EncodedEvent.everyDevice && deviceIDs[Int(e.device)] == 0 {
                        let id = NameID.of(symbolNames[Int(e.device)])
                        deviceIDs[Int(e.device)] = id
                        newDevices.append((id, symbolNames[Int(e.device)]))
                    }
                    if appIDs[Int(e.app)] == 0 {
                        let id = NameID.of(symbolNames[Int(e.app)])
                        appIDs[Int(e.app)] = id
                        newApps.append((id, symbolNames[Int(e.app)]))
                    }
                }
                try await store(names: newDevices, table: .devices, on: c)
                try await store(names: newApps, table: .apps, on: c)
                rows.clear()
                rows.reserveCapacity(parsed.events.count * 64)
                for e in parsed.events {
                    let device = e.device == EncodedEvent.everyDevice ? NameID.everyDevice : deviceIDs[Int(e.device)]
                    CopyText.appendEvent(e, device: device, file: fileID, app: appIDs[Int(e.app)], to: &rows)
                    aggregates.add(e)
                }
                if !parsed.events.isEmpty {
                    let chunk = rows
                    try await c.copyFrom(table: "event_log", columns: CopyText.eventColumns, logger: logger) { writer in
                        try await writer.write(chunk)
                    }
                }
                events += Int64(parsed.events.count)
                if let onProgress = options.onProgress {
                    let now = WallClock.monotonic()
                    if now - lastProgress >= 0.2 {
                        lastProgress = now
                        onProgress(IngestProgress(path: path, bytesRead: parsed.bytesRead, totalBytes: size,
                                                  events: events, seconds: now - started))
                    }
                }
            }
        }
        let end = summary!
        let hash = knownHash ?? end.sha256
        let format = end.format?.rawValue ?? "csv"
        // The per-file aggregates `stats` and `devices` read.
        rows.clear()
        for row in aggregates.countRows() {
            let device = row.device == EncodedEvent.everyDevice ? NameID.everyDevice : deviceIDs[Int(row.device)]
            CopyText.appendRow([device, fileID, appIDs[Int(row.app)], row.kind, row.count.n, row.count.first, row.count.last], to: &rows)
        }
        if rows.readableBytes > 0 {
            let chunk = rows
            try await c.copyFrom(table: "file_counts", columns: ["device_id", "file_id", "app_id", "kind", "n", "first_us", "last_us"],
                                 logger: logger) { writer in try await writer.write(chunk) }
        }
        rows.clear()
        for row in aggregates.dayRows() {
            CopyText.appendRow([deviceIDs[Int(row.device)], fileID, Int64(row.day), row.launches], to: &rows)
        }
        if rows.readableBytes > 0 {
            let chunk = rows
            try await c.copyFrom(table: "file_days", columns: ["device_id", "file_id", "day", "launches"], logger: logger) { writer in
                try await writer.write(chunk)
            }
        }
        if events == 0 && rejected == 0 && !options.recordsEmptyFiles {
            // Rolled back: nothing to record.
            throw AlreadyIngested(result: FileIngestResult(
                path: path, sha256: hash, status: .ingested, events: 0, duplicates: 0, rejected: 0, bytes: end.bytesRead,
                seconds: WallClock.monotonic() - started, format: format, gzip: end.isGzip))
        }
        let ingestedAt = Timestamp.format(micros: Int64(options.now() * 1_000_000), utcOffsetSeconds: 0)
        let recordName = name ?? path
        let inserted = try await c.query("""
            INSERT INTO files(file_id, name, sha256, format, gzip, size_bytes, rows, rejected, ingested_at, first_event)
            SELECT \(fileID), \(recordName), \(hash), \(format), \(end.isGzip), \(end.bytesRead), \(events), \(rejected), \(ingestedAt),
                   (SELECT COALESCE(max(first_event + rows), 0) FROM files)
            ON CONFLICT (sha256) DO NOTHING RETURNING file_id
            """, logger: logger)
        var added = false
        for try await _ in inserted.decode(Int64.self) { added = true }
        if !added {
            // The same bytes under another name, committed meanwhile.
            throw AlreadyIngested(result: FileIngestResult(
                path: path, sha256: hash, status: .alreadyIngested, events: 0, duplicates: 0, rejected: 0,
                bytes: end.bytesRead, seconds: WallClock.monotonic() - started, format: format, gzip: end.isGzip))
        }
        return FileIngestResult(path: path, sha256: hash, status: .ingested, events: events, duplicates: 0, rejected: rejected,
                                bytes: end.bytesRead, seconds: WallClock.monotonic() - started, format: format, gzip: end.isGzip)
    }

    /// The tables names are kept in.
    private enum NameTable {
        case devices, apps
    }

    /// Stores names under their ids (those already stored are left as they are), numbering the
    /// new ones (`seq`) in the order given, then checks that every id holds its own name, byte
    /// for byte: two names with one 63-bit hash are refused rather than merged.
    private func store(names ordered: [(id: Int64, name: String)], table: NameTable, on c: PostgresConnection) async throws {
        guard !ordered.isEmpty else { return }
        let ids = ordered.map(\.id)
        let texts = ordered.map(\.name)
        var names: [Int64: String] = [:]
        for (id, name) in ordered { names[id] = name }
        let stored: PostgresRowSequence
        // The numbers are drawn after the sort (PostgreSQL evaluates a volatile output column
        // after ORDER BY), so they follow the names' order.
        switch table {
        case .devices:
            try await c.query(
                """
                INSERT INTO devices(device_id, name, seq)
                SELECT u.id, u.name, nextval('device_seqs') FROM unnest(\(ids)::bigint[], \(texts)::text[]) WITH ORDINALITY AS u(id, name, o)
                WHERE NOT EXISTS (SELECT 1 FROM devices d WHERE d.device_id = u.id) ORDER BY u.o
                ON CONFLICT DO NOTHING
                """,
                logger: logger)
            stored = try await c.query("SELECT device_id, name FROM devices WHERE device_id = ANY(\(ids)::bigint[])", logger: logger)
        case .apps:
            try await c.query(
                """
                INSERT INTO apps(app_id, name, seq)
                SELECT u.id, u.name, nextval('app_seqs') FROM unnest(\(ids)::bigint[], \(texts)::text[]) WITH ORDINALITY AS u(id, name, o)
                WHERE NOT EXISTS (SELECT 1 FROM apps a WHERE a.app_id = u.id) ORDER BY u.o
                ON CONFLICT DO NOTHING
                """,
                logger: logger)
            stored = try await c.query("SELECT app_id, name FROM apps WHERE app_id = ANY(\(ids)::bigint[])", logger: logger)
        }
        var found = 0
        for try await (id, name) in stored.decode((Int64, String).self) {
            found += 1
            guard let wanted = names[id], wanted.utf8.elementsEqual(name.utf8) else {
                throw StoreError(path: location, message: "the names '\(name)' and '\(names[id] ?? "")' have the same id \(id) (a 63-bit hash collision); this database cannot hold both")
            }
        }
        if found != names.count {
            // An app name stored under another id cannot happen (ids are hashes of names); a
            // unique-name conflict would leave one out.
            throw StoreError(path: location, message: "\(names.count - found) of the file's names could not be stored (a name is stored under another id); the database is not one this fetchcast wrote")
        }
    }

    private func fileExists(sizeBytes: Int64) async throws -> Bool {
        do { return try await scalar("SELECT count(*) FROM files WHERE size_bytes = \(sizeBytes)", on: connection) > 0 } catch {
            throw mapped(error)
        }
    }

    private func fileExists(sha256: String, on c: PostgresConnection? = nil) async throws -> Bool {
        do { return try await scalar("SELECT count(*) FROM files WHERE sha256 = \(sha256)", on: c ?? connection) > 0 } catch {
            throw mapped(error)
        }
    }
}

/// Ends an append's transaction without a change: the file's hash is already stored (or the
/// file holds no row and empty files are not recorded).
private struct AlreadyIngested: Error {
    var result: FileIngestResult
}
