import FetchCastTrace

/// Adds trace files to a store, one transaction per file.
///
/// Lossless: every valid row becomes exactly one row of `event_log`, duplicates included.
/// Idempotent per file: a file whose SHA-256 the store already holds adds nothing. Strict by
/// default: the first invalid row aborts the file's transaction, so the file adds nothing.
public final class Ingestor {
    /// Choices for an ingest.
    public struct Options {
        /// How values are read.
        public var trace: TraceOptions
        /// Ingest valid rows and report invalid ones to `onReject` instead of failing.
        public var skipInvalid: Bool
        /// Receives each rejected row (with `skipInvalid`).
        public var onReject: ((TraceError, String) -> Void)?
        /// Receives progress about five times a second.
        public var onProgress: ((IngestProgress) -> Void)?
        /// The wall clock (Unix seconds), recorded as each file's ingest time.
        public var now: () -> Double

        /// Creates options.
        public init(
            trace: TraceOptions = TraceOptions(), skipInvalid: Bool = false,
            onReject: ((TraceError, String) -> Void)? = nil, onProgress: ((IngestProgress) -> Void)? = nil,
            now: @escaping () -> Double = WallClock.now
        ) {
            self.trace = trace
            self.skipInvalid = skipInvalid
            self.onReject = onReject
            self.onProgress = onProgress
            self.now = now
        }
    }

    let store: Store
    let options: Options

    /// Creates an ingestor writing to `store`.
    public init(store: Store, options: Options = Options()) {
        self.store = store
        self.options = options
    }

    private struct CountKey: Hashable {
        var device: Int32
        var app: Int32
        var kind: UInt8
    }

    private struct Count {
        var n: Int64
        var first: Int64
        var last: Int64
    }

    private struct DayKey: Hashable {
        var device: Int32
        var day: Int32
    }

    /// Ingests one file (`-` for standard input).
    ///
    /// - Returns: What happened.
    /// - Throws: ``TraceError`` for bad input (the store is left as it was before the file),
    ///   ``StoreError`` when the store fails.
    /// - Complexity: O(rows) time; memory O(devices × apps + device-days), not O(rows).
    public func ingest(path: String) throws -> FileIngestResult {
        let started = WallClock.monotonic()
        let c = store.connection
        var knownHash: String?
        if path != "-" {
            let hash = try RawInput.sha256(ofFile: path)
            if try existingFile(sha256: hash) {
                return FileIngestResult(path: path, sha256: hash, status: .alreadyIngested, events: 0, rejected: 0,
                                        bytes: 0, seconds: WallClock.monotonic() - started, format: "", gzip: false)
            }
            knownHash = hash
        }
        let symbols = SymbolTable()
        let reader = try TraceReader(path: path, symbols: symbols, options: options.trace)
        try c.execute("BEGIN IMMEDIATE")
        do {
            if let knownHash, try existingFile(sha256: knownHash) {
                try c.execute("ROLLBACK")
                return FileIngestResult(path: path, sha256: knownHash, status: .alreadyIngested, events: 0, rejected: 0,
                                        bytes: 0, seconds: WallClock.monotonic() - started, format: "", gzip: false)
            }
            let fileInsert = try c.prepare(
                "INSERT INTO files(name, sha256, format, gzip, size_bytes, rows, rejected, ingested_at) VALUES (?, ?, '', 0, 0, 0, 0, ?)")
            try fileInsert.bind([.text(path), .text("pending:\(started)"), .text(Timestamp.format(micros: Int64(options.now() * 1_000_000), utcOffsetSeconds: 0))])
            try fileInsert.run()
            let fileID = c.lastInsertRowID
            let insert = try c.prepare(
                "INSERT INTO event_log(file_id, line, time_us, utc_offset_s, device_id, app_id, kind, result, bytes, duration_ms) VALUES (?,?,?,?,?,?,?,?,?,?)")
            insert.bindInt(1, fileID)
            let names = NameResolver(connection: c)
            var deviceIDs: [Int64] = []
            var appIDs: [Int64] = []
            var counts: [CountKey: Count] = [:]
            var days: [DayKey: Int64] = [:]
            var batch: [EncodedEvent] = []
            batch.reserveCapacity(8192)
            var events: Int64 = 0
            var rejected: Int64 = 0
            var firstID: Int64?
            var lastProgress = started
            let onReject: ((TraceError, String) -> Void)? = options.skipInvalid ? { [options] error, text in
                rejected += 1
                options.onReject?(error, text)
            } : nil
            while try reader.next(into: &batch, maxCount: 8192, onInvalid: onReject) {
                if symbols.count > deviceIDs.count {
                    deviceIDs.append(contentsOf: repeatElement(0, count: symbols.count - deviceIDs.count))
                    appIDs.append(contentsOf: repeatElement(0, count: symbols.count - appIDs.count))
                }
                for e in batch {
                    let deviceID: Int64?
                    if e.device == EncodedEvent.everyDevice {
                        deviceID = nil
                    } else {
                        var id = deviceIDs[Int(e.device)]
                        if id == 0 {
                            id = try names.id(table: "devices", name: symbols.name(e.device))
                            deviceIDs[Int(e.device)] = id
                        }
                        deviceID = id
                    }
                    var appID = appIDs[Int(e.app)]
                    if appID == 0 {
                        appID = try names.id(table: "apps", name: symbols.name(e.app))
                        appIDs[Int(e.app)] = appID
                    }
                    insert.bindInt(2, e.line)
                    insert.bindInt(3, e.timeMicros)
                    insert.bindInt(4, Int64(e.utcOffsetSeconds))
                    insert.bindInt(5, deviceID)
                    insert.bindInt(6, appID)
                    insert.bindInt(7, Int64(e.kind.rawValue))
                    insert.bindInt(8, e.result.map { Int64($0.rawValue) })
                    insert.bindInt(9, e.bytes)
                    insert.bindInt(10, e.durationMs)
                    try insert.run()
                    if firstID == nil { firstID = c.lastInsertRowID }
                    let key = CountKey(device: e.device, app: e.app, kind: e.kind.rawValue)
                    if var count = counts[key] {
                        count.n += 1
                        count.first = min(count.first, e.timeMicros)
                        count.last = max(count.last, e.timeMicros)
                        counts[key] = count
                    } else {
                        counts[key] = Count(n: 1, first: e.timeMicros, last: e.timeMicros)
                    }
                    if e.kind == .launch {
                        let day = LocalTime.day(micros: e.timeMicros, utcOffsetSeconds: e.utcOffsetSeconds)
                        days[DayKey(device: e.device, day: Int32(truncatingIfNeeded: day)), default: 0] += 1
                    }
                }
                events += Int64(batch.count)
                batch.removeAll(keepingCapacity: true)
                if let onProgress = options.onProgress {
                    let now = WallClock.monotonic()
                    if now - lastProgress >= 0.2 {
                        lastProgress = now
                        onProgress(IngestProgress(path: path, bytesRead: reader.bytesRead, totalBytes: reader.size,
                                                  events: events, seconds: now - started))
                    }
                }
            }
            let hash = reader.sha256
            if knownHash == nil, try existingFile(sha256: hash) {
                try c.execute("ROLLBACK")
                return FileIngestResult(path: path, sha256: hash, status: .alreadyIngested, events: 0, rejected: 0,
                                        bytes: reader.bytesRead, seconds: WallClock.monotonic() - started,
                                        format: reader.format?.rawValue ?? "", gzip: reader.isGzip)
            }
            let countInsert = try c.prepare(
                "INSERT INTO file_counts(file_id, device_id, app_id, kind, n, first_us, last_us) VALUES (?,?,?,?,?,?,?)")
            for (key, count) in counts.sorted(by: { ($0.key.device, $0.key.app, $0.key.kind) < ($1.key.device, $1.key.app, $1.key.kind) }) {
                try countInsert.bind([
                    .integer(fileID), key.device == EncodedEvent.everyDevice ? .null : .integer(deviceIDs[Int(key.device)]),
                    .integer(appIDs[Int(key.app)]), .integer(Int64(key.kind)), .integer(count.n), .integer(count.first), .integer(count.last),
                ])
                try countInsert.run()
            }
            let dayInsert = try c.prepare("INSERT INTO file_days(file_id, device_id, day, launches) VALUES (?,?,?,?)")
            for (key, n) in days {
                try dayInsert.bind([.integer(fileID), .integer(deviceIDs[Int(key.device)]), .integer(Int64(key.day)), .integer(n)])
                try dayInsert.run()
            }
            let update = try c.prepare(
                "UPDATE files SET sha256 = ?, format = ?, gzip = ?, size_bytes = ?, rows = ?, rejected = ?, first_event_id = ?, last_event_id = ? WHERE id = ?")
            try update.bind([
                .text(hash), .text(reader.format?.rawValue ?? "csv"), .integer(reader.isGzip ? 1 : 0), .integer(reader.bytesRead),
                .integer(events), .integer(rejected), firstID.map { .integer($0) } ?? .null,
                firstID.map { _ in .integer(c.lastInsertRowIDOfEvents(fileID: fileID, first: firstID!, count: events)) } ?? .null,
                .integer(fileID),
            ])
            try update.run()
            try c.execute("COMMIT")
            return FileIngestResult(path: path, sha256: hash, status: .ingested, events: events, rejected: rejected,
                                    bytes: reader.bytesRead, seconds: WallClock.monotonic() - started,
                                    format: reader.format?.rawValue ?? "csv", gzip: reader.isGzip)
        } catch {
            try? c.execute("ROLLBACK")
            throw error
        }
    }

    private func existingFile(sha256: String) throws(StoreError) -> Bool {
        try store.connection.scalarInt("SELECT count(*) FROM files WHERE sha256 = ?", [.text(sha256)]) > 0
    }
}

extension Connection {
    /// The last event id of a file: its events are inserted in one transaction by one writer,
    /// so they are the contiguous ids `first ..< first + count`.
    fileprivate func lastInsertRowIDOfEvents(fileID: Int64, first: Int64, count: Int64) -> Int64 {
        first + count - 1
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
