import FetchCastCore
import FetchCastStore
import FetchCastTrace
import PostgresNIO

extension PostgresEventLog {
    /// Appends one trace file in one transaction: its events in one `COPY … FROM STDIN` stream
    /// (text format, integers only; each parser batch's rows by device, then line), its names
    /// (`INSERT … ON CONFLICT DO NOTHING` from bound arrays), its per-file aggregates (`COPY`),
    /// then its `files` row keyed by the SHA-256 of its bytes.
    ///
    /// Appends to one database take turns (an advisory lock held to the commit), as SQLite's
    /// do; readers are never blocked. A file whose hash the database holds adds nothing; a bad
    /// row (without ``IngestOptions/skipInvalid``) or a failure rolls everything back.
    ///
    /// Rows whose events the database already holds from an earlier file are skipped and
    /// counted, as on SQLite (``PostgresDuplicateFilter``), unless
    /// ``IngestOptions/keepsDuplicates``: a query and a `COPY` a batch then, instead of one
    /// `COPY` for the file, when the database holds events.
    /// - Complexity: O(rows) time; memory O(devices × apps + device-days), not O(rows).
    public func append(path: String, name: String?, options: IngestOptions) async throws -> FileIngestResult {
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
        // Stopped (its thread let go of the file) whenever the append fails before the end of the
        // file: in the transaction, or before it (a connection lost as it begins).
        var sourceEnded = false
        do {
            return try await transaction { c in
                try await self.append(
                    from: source, sourceEnded: &sourceEnded, path: path, name: name, knownHash: known, size: size,
                    options: options, started: started, on: c)
            }
        } catch let duplicate as AlreadyIngested {
            return duplicate.result
        } catch {
            if !sourceEnded { source.cancel() }
            throw error
        }
    }

    /// The body of ``append(path:name:options:)``, inside its transaction.
    private func append(
        from source: EventSource<TraceReader>, sourceEnded: inout Bool, path: String, name: String?, knownHash: String?,
        size: Int64?, options: IngestOptions, started: Double, on c: PostgresConnection
    ) async throws -> FileIngestResult {
        try await statement("SELECT pg_advisory_xact_lock(\(PostgresSchema.appendLock))", on: c)
        if let knownHash, try await fileExists(sha256: knownHash, on: c) {
            sourceEnded = true
            source.cancel()
            throw AlreadyIngested(result: FileIngestResult(
                path: path, sha256: knownHash, status: .alreadyIngested, events: 0, duplicates: 0, rejected: 0,
                bytes: 0, seconds: WallClock.monotonic() - started, format: "", gzip: false))
        }
        // After the largest file id, as SQLite's rowids (no AUTOINCREMENT): a forgotten last
        // file's id is taken again, so `files` and `export events` agree with SQLite's.
        let fileID = try await scalar("SELECT COALESCE(max(file_id), 0) + 1 FROM files", on: c)
        var names = FileNames()
        var aggregates = IngestAggregates()
        var events: Int64 = 0
        var rejected: Int64 = 0
        var lastProgress = started
        var summary: TraceReader.Summary?
        // Rows the database already holds from earlier files are looked for (a query a batch)
        // unless kept, and only when it holds events.
        var duplicates: PostgresDuplicateFilter?
        if !options.keepsDuplicates, try await scalar("SELECT \(unescaped: PostgresModelStore.lastEvent)", on: c) > 0 {
            duplicates = PostgresDuplicateFilter(fileID: fileID, citus: citus)
        }
        var ended = false
        defer { sourceEnded = ended }
        var order: [Int] = []
        /// A batch's rows to add (those `keep` says, or all), by device, then line: consecutive
        /// index entries of `event_log` then fall on the same leaf pages (the file's order is
        /// time, which spreads them over every device's).
        func encoded(_ batch: [EncodedEvent], devices deviceIDs: [Int64], apps appIDs: [Int64], keep: [Bool]?) -> ByteBuffer {
            order.removeAll(keepingCapacity: true)
            order.append(contentsOf: batch.indices)
            order.sort { deviceIDs[$0] != deviceIDs[$1] ? deviceIDs[$0] < deviceIDs[$1] : $0 < $1 }
            var rows = ByteBuffer()
            rows.reserveCapacity(batch.count * 80)
            for i in order where keep?[i] ?? true {
                let e = batch[i]
                CopyText.appendEvent(e, device: deviceIDs[i], file: fileID, app: appIDs[i], to: &rows)
                aggregates.add(e)
            }
            return rows
        }
        /// The next batch with events, its names recorded (ids in the rows' order first: a name
        /// first seen here is numbered, `seq`, in the order of its first event, as SQLite numbers
        /// it) and its rejects reported; `nil` at the end.
        func nextBatch() throws -> (events: [EncodedEvent], devices: [Int64], apps: [Int64], bytesRead: Int64)? {
            while true {
                switch source.next() {
                case .failure(let error):
                    ended = true
                    throw error
                case .end(let end):
                    ended = true
                    summary = end
                    return nil
                case .batch(let parsed):
                    for r in parsed.rejects {
                        rejected += 1
                        options.onReject?(r.error, r.text)
                    }
                    names.add(parsed.newNames)
                    guard !parsed.events.isEmpty else { continue }
                    return (parsed.events, parsed.events.map { names.deviceID($0.device) }, parsed.events.map { names.appID($0.app) },
                            parsed.bytesRead)
                }
            }
        }
        func progress(_ bytesRead: Int64) {
            guard let onProgress = options.onProgress else { return }
            let now = WallClock.monotonic()
            if now - lastProgress >= 0.2 {
                lastProgress = now
                onProgress(IngestProgress(path: path, bytesRead: bytesRead, totalBytes: size, events: events, seconds: now - started))
            }
        }
        if var filter = duplicates {
            // A COPY a batch, after the batch's query (a query cannot run inside a COPY).
            while let batch = try nextBatch() {
                let keep = try await filter.newEvents(batch.events, devices: batch.devices, apps: batch.apps, on: c, log: self)
                let chunk = encoded(batch.events, devices: batch.devices, apps: batch.apps, keep: keep)
                events += Int64(keep.map { $0.count { $0 } } ?? batch.events.count)
                if chunk.readableBytes > 0 {
                    try await copy(into: "event_log", columns: CopyText.eventColumns, on: c) { try await $0.send(chunk) }
                }
                progress(batch.bytesRead)
            }
            duplicates = filter
        } else {
            // One COPY for all of the file's events: the rows of a batch are sent while the
            // server still inserts those before (no round trip per batch), and the next batch is
            // parsed on the source's thread meanwhile. Names are stored after it, in the same
            // transaction. (The COPY runs on the connection's event loop; the batches are taken
            // and encoded off it.)
            try await copy(into: "event_log", columns: CopyText.eventColumns, on: c) { rows in
                while let chunk = try await rows.offLoop({ () throws -> ByteBuffer? in
                    guard let batch = try nextBatch() else { return nil }
                    events += Int64(batch.events.count)
                    progress(batch.bytesRead)
                    return encoded(batch.events, devices: batch.devices, apps: batch.apps, keep: nil)
                }) {
                    try await rows.send(chunk)
                }
            }
        }
        let skipped = duplicates?.skipped ?? 0
        if let (a, b, id) = names.collision {
            throw StoreError(path: location, message: "the names '\(a)' and '\(b)' have the same id \(id) (a 63-bit hash collision); this database cannot hold both")
        }
        try await store(names: names.deviceOrder.map { ($0, names.devices[$0]!) }, table: .devices, on: c)
        try await store(names: names.appOrder.map { ($0, names.apps[$0]!) }, table: .apps, on: c)
        let end = summary!
        let hash = knownHash ?? end.sha256
        let format = end.format?.rawValue ?? "csv"
        // The per-file aggregates `stats` and `devices` read.
        var rows = ByteBuffer()
        for row in aggregates.countRows() {
            CopyText.appendRow([names.deviceID(row.device), fileID, names.appID(row.app), row.kind, row.count.n, row.count.first, row.count.last],
                               to: &rows)
        }
        if rows.readableBytes > 0 {
            let chunk = rows
            try await copy(into: "file_counts", columns: ["device_id", "file_id", "app_id", "kind", "n", "first_us", "last_us"], on: c) {
                try await $0.send(chunk)
            }
        }
        rows.clear()
        for row in aggregates.dayRows() {
            CopyText.appendRow([names.deviceID(row.device), fileID, Int64(row.day), row.launches], to: &rows)
        }
        if rows.readableBytes > 0 {
            let chunk = rows
            try await copy(into: "file_days", columns: ["device_id", "file_id", "day", "launches"], on: c) { try await $0.send(chunk) }
        }
        if events == 0 && rejected == 0 && skipped == 0 && !options.recordsEmptyFiles {
            // Rolled back: nothing to record.
            throw AlreadyIngested(result: FileIngestResult(
                path: path, sha256: hash, status: .ingested, events: 0, duplicates: 0, rejected: 0, bytes: end.bytesRead,
                seconds: WallClock.monotonic() - started, format: format, gzip: end.isGzip))
        }
        let ingestedAt = Timestamp.format(micros: Int64(options.now() * 1_000_000), utcOffsetSeconds: 0)
        let recordName = name ?? path
        let inserted = try await statement("""
            INSERT INTO files(file_id, name, sha256, format, gzip, size_bytes, rows, rejected, ingested_at, first_event)
            SELECT \(fileID), \(recordName), \(hash), \(format), \(end.isGzip), \(end.bytesRead), \(events), \(rejected), \(ingestedAt),
                   \(unescaped: PostgresModelStore.lastEvent)
            ON CONFLICT (sha256) DO NOTHING RETURNING file_id
            """, on: c)
        var added = false
        for try await _ in inserted.decode(Int64.self) { added = true }
        if !added {
            // The same bytes under another name, committed meanwhile.
            throw AlreadyIngested(result: FileIngestResult(
                path: path, sha256: hash, status: .alreadyIngested, events: 0, duplicates: 0, rejected: 0,
                bytes: end.bytesRead, seconds: WallClock.monotonic() - started, format: format, gzip: end.isGzip))
        }
        return FileIngestResult(path: path, sha256: hash, status: .ingested, events: events, duplicates: skipped, rejected: rejected,
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
        var names: [Int64: String] = [:]
        for (id, name) in ordered { names[id] = name }
        // In slices, so that a file of a million devices binds no array of a million names.
        for start in stride(from: 0, to: ordered.count, by: 10_000) {
            try await store(ids: ordered[start..<min(start + 10_000, ordered.count)].map(\.id), of: names, table: table, on: c)
        }
    }

    /// Stores one slice of ``store(names:table:on:)``'s names, in order.
    private func store(ids: [Int64], of names: [Int64: String], table: NameTable, on c: PostgresConnection) async throws {
        let texts = ids.map { names[$0]! }
        let stored: PostgresRowSequence
        // The numbers are drawn after the sort (PostgreSQL evaluates a volatile output column
        // after ORDER BY), so they follow the names' order. An anti-join, not a correlated
        // `NOT EXISTS`, which Citus does not plan beside `unnest`.
        switch table {
        case .devices:
            try await statement(
                """
                INSERT INTO devices(device_id, name, seq)
                SELECT u.id, u.name, nextval('device_seqs') FROM unnest(\(ids)::bigint[], \(texts)::text[]) WITH ORDINALITY AS u(id, name, o)
                LEFT JOIN devices d ON d.device_id = u.id WHERE d.device_id IS NULL ORDER BY u.o
                ON CONFLICT DO NOTHING
                """, on: c)
            stored = try await statement("SELECT device_id, name FROM devices WHERE device_id = ANY(\(ids)::bigint[])", on: c)
        case .apps:
            try await statement(
                """
                INSERT INTO apps(app_id, name, seq)
                SELECT u.id, u.name, nextval('app_seqs') FROM unnest(\(ids)::bigint[], \(texts)::text[]) WITH ORDINALITY AS u(id, name, o)
                LEFT JOIN apps a ON a.app_id = u.id WHERE a.app_id IS NULL ORDER BY u.o
                ON CONFLICT DO NOTHING
                """, on: c)
            stored = try await statement("SELECT app_id, name FROM apps WHERE app_id = ANY(\(ids)::bigint[])", on: c)
        }
        var found = 0
        for try await (id, name) in stored.decode((Int64, String).self) {
            found += 1
            guard let wanted = names[id], wanted.utf8.elementsEqual(name.utf8) else {
                throw StoreError(path: location, message: "the names '\(name)' and '\(names[id] ?? "")' have the same id \(id) (a 63-bit hash collision); this database cannot hold both")
            }
        }
        if found != ids.count {
            // An app name stored under another id cannot happen (ids are hashes of names); a
            // unique-name conflict would leave one out.
            throw StoreError(path: location, message: "\(ids.count - found) of the file's names could not be stored (a name is stored under another id); the database is not one this fetchcast wrote")
        }
    }

    private func fileExists(sizeBytes: Int64) async throws -> Bool {
        do { return try await scalar("SELECT count(*) FROM files WHERE size_bytes = \(sizeBytes)", on: try await usableConnection()) > 0 } catch {
            throw mapped(error)
        }
    }

    private func fileExists(sha256: String, on c: PostgresConnection? = nil) async throws -> Bool {
        do {
            let connection: PostgresConnection
            if let c { connection = c } else { connection = try await usableConnection() }
            return try await scalar("SELECT count(*) FROM files WHERE sha256 = \(sha256)", on: connection) > 0
        } catch {
            throw mapped(error)
        }
    }
}

/// The names of the file being appended, by the reader's symbol number, with their ids (hashes
/// of the names, computed once each), and those the file uses as devices and as apps: stored
/// once its events are streamed.
private struct FileNames {
    private var symbols: [String] = []
    private var ids: [Int64] = []
    /// Per symbol: bit 0 used as a device, bit 1 as an app.
    private var uses: [UInt8] = []
    private(set) var devices: [Int64: String] = [:]
    private(set) var apps: [Int64: String] = [:]
    /// The device and app ids in the order of their first use.
    private(set) var deviceOrder: [Int64] = []
    private(set) var appOrder: [Int64] = []
    /// Two of the file's names with one id (a 63-bit hash collision), if any.
    private(set) var collision: (String, String, Int64)?

    /// Mirrors the names the reader interned for a batch, in order.
    mutating func add(_ names: [String]) {
        guard !names.isEmpty else { return }
        symbols.append(contentsOf: names)
        ids.append(contentsOf: repeatElement(0, count: names.count))
        uses.append(contentsOf: repeatElement(0, count: names.count))
    }

    /// The id of the device `symbol` names (``NameID/everyDevice`` for a publish to every device).
    mutating func deviceID(_ symbol: Int32) -> Int64 {
        if symbol == EncodedEvent.everyDevice { return NameID.everyDevice }
        return id(Int(symbol), use: 1)
    }

    /// The id of the app `symbol` names.
    mutating func appID(_ symbol: Int32) -> Int64 { id(Int(symbol), use: 2) }

    @inline(__always)
    private mutating func id(_ i: Int, use: UInt8) -> Int64 {
        if uses[i] & use != 0 { return ids[i] }
        if ids[i] == 0 { ids[i] = NameID.of(symbols[i]) }
        uses[i] |= use
        let other = use == 1 ? devices.updateValue(symbols[i], forKey: ids[i]) : apps.updateValue(symbols[i], forKey: ids[i])
        // Distinct symbols are distinct byte strings: another one under this id is a collision.
        if let other {
            if collision == nil { collision = (other, symbols[i], ids[i]) }
        } else if use == 1 {
            deviceOrder.append(ids[i])
        } else {
            appOrder.append(ids[i])
        }
        return ids[i]
    }
}

/// Ends an append's transaction without a change: the file's hash is already stored (or the
/// file holds no row and empty files are not recorded).
private struct AlreadyIngested: Error {
    var result: FileIngestResult
}
