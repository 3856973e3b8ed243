/// One ingested file, as `fetchcast files` lists it.
public struct StoredFile: Sendable, Hashable, Codable {
    /// The store's id for the file.
    public var id: Int64
    /// The path it was ingested from.
    public var name: String
    /// SHA-256 of its bytes.
    public var sha256: String
    /// `csv` or `jsonl`.
    public var format: String
    /// Whether it was gzip.
    public var gzip: Bool
    /// Its size in bytes.
    public var sizeBytes: Int64
    /// Events it added.
    public var rows: Int64
    /// Rows rejected under `--skip-invalid`.
    public var rejected: Int64
    /// When it was ingested (ISO 8601, UTC).
    public var ingestedAt: String

    /// A file record as an engine read it.
    package init(
        id: Int64, name: String, sha256: String, format: String, gzip: Bool, sizeBytes: Int64, rows: Int64, rejected: Int64,
        ingestedAt: String
    ) {
        self.id = id
        self.name = name
        self.sha256 = sha256
        self.format = format
        self.gzip = gzip
        self.sizeBytes = sizeBytes
        self.rows = rows
        self.rejected = rejected
        self.ingestedAt = ingestedAt
    }

    enum CodingKeys: String, CodingKey {
        case id, name, sha256, format, gzip, rows, rejected
        case sizeBytes = "size_bytes"
        case ingestedAt = "ingested_at"
    }
}

extension Store {
    /// Every ingested file, oldest first.
    public func files() throws(StoreError) -> [StoredFile] {
        let s = try connection.prepare(
            "SELECT id, name, sha256, format, gzip, size_bytes, rows, rejected, ingested_at FROM files ORDER BY id")
        var out: [StoredFile] = []
        while try s.step() {
            out.append(StoredFile(
                id: s.int(0), name: s.text(1), sha256: s.text(2), format: s.text(3), gzip: s.int(4) != 0,
                sizeBytes: s.int(5), rows: s.int(6), rejected: s.int(7), ingestedAt: s.text(8)))
        }
        return out
    }

    /// Removes one file's events (and its aggregates), found by path as ingested, by full
    /// SHA-256 or by a unique hash prefix of at least 8 digits.
    ///
    /// Persisted model state is dropped too, but for a new ``ForgetMark``: it is rebuilt from the
    /// remaining events on next use, in a new prior epoch.
    /// - Returns: The file removed.
    /// - Throws: ``StoreError`` when nothing or more than one file matches.
    public func forget(_ fileOrHash: String) throws(StoreError) -> StoredFile {
        let file = try StoredFile.matching(fileOrHash, in: try files(), location: path)
        let c = connection
        try c.transaction(.immediate) { () throws(StoreError) in
            let range = try c.prepare("SELECT first_event_id, last_event_id FROM files WHERE id = ?")
            try range.bind([.integer(file.id)])
            if try range.step(), !range.isNull(0) {
                let delete = try c.prepare("DELETE FROM event_log WHERE id BETWEEN ? AND ? AND file_id = ?")
                try delete.bind([.integer(range.int(0)), .integer(range.int(1)), .integer(file.id)])
                try delete.run()
            }
            for table in ["file_counts", "file_days"] {
                let d = try c.prepare("DELETE FROM \(table) WHERE file_id = ?")
                try d.bind([.integer(file.id)])
                try d.run()
            }
            let d = try c.prepare("DELETE FROM files WHERE id = ?")
            try d.bind([.integer(file.id)])
            try d.run()
            try c.execute("DELETE FROM model_state")
            try saveModelStates([ForgetMark.record(watermark: try lastEventID())])
        }
        return file
    }
}
