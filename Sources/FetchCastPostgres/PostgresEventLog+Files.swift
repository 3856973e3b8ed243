import FetchCastStore
import PostgresNIO

extension PostgresEventLog {
    /// Every ingested file, oldest first (by `file_id`, as SQLite orders by `files.id`).
    public func files() async throws -> [StoredFile] {
        try await readSnapshot { c in try await self.files(on: c) }
    }

    /// Removes one file as ``EventLogWriter/forget(_:)`` says, in one transaction that holds
    /// the append lock and the model lock (``PostgresSchema/appendLock``,
    /// ``PostgresSchema/modelLock``, transaction-level: no ingest or fold runs meanwhile, and a
    /// crash releases them).
    ///
    /// Event numbers need no change: each file keeps its `first_event`, and the next file starts
    /// after the end of the last remaining one (``PostgresModelStore/lastEvent``) and takes the
    /// file id after the largest remaining one, as SQLite's rowids do. Model state is emptied
    /// but for a new ``ForgetMark``, as on SQLite.
    /// - Complexity: O(the file's events), deleted through the primary key of each of its
    ///   devices (found in `file_counts`).
    public func forget(_ fileOrHash: String) async throws -> StoredFile {
        try await transaction { c in
            try await self.statement("SELECT pg_advisory_xact_lock(\(PostgresSchema.appendLock))", on: c)
            try await self.statement("SELECT pg_advisory_xact_lock(\(PostgresSchema.modelLock))", on: c)
            let file = try StoredFile.matching(fileOrHash, in: try await self.files(on: c), location: self.location)
            let id = file.id
            try await self.statement("""
                DELETE FROM event_log WHERE file_id = \(id)
                AND device_id = ANY(ARRAY(SELECT DISTINCT device_id FROM file_counts WHERE file_id = \(id)))
                """, on: c)
            try await self.statement("DELETE FROM file_counts WHERE file_id = \(id)", on: c)
            try await self.statement("DELETE FROM file_days WHERE file_id = \(id)", on: c)
            try await self.statement("DELETE FROM files WHERE file_id = \(id)", on: c)
            try await self.statement("DELETE FROM model_state", on: c)
            try await self.statement("DELETE FROM device_state", on: c)
            let mark = ForgetMark.record(watermark: 0)
            try await self.statement("""
                INSERT INTO model_state(key, watermark, state)
                VALUES (\(mark.key), \(unescaped: PostgresModelStore.lastEvent), \(ByteBuffer(bytes: mark.state)))
                """, on: c)
            return file
        }
    }

    private func files(on c: PostgresConnection) async throws -> [StoredFile] {
        var out: [StoredFile] = []
        let rows = try await statement(
            "SELECT file_id, name, sha256, format, gzip, size_bytes, rows, rejected, ingested_at FROM files ORDER BY file_id", on: c)
        for try await (id, name, sha256, format, gzip, size, count, rejected, ingestedAt) in rows.decode(
            (Int64, String, String, String, Bool, Int64, Int64, Int64, String).self) {
            out.append(StoredFile(
                id: id, name: name, sha256: sha256, format: format, gzip: gzip, sizeBytes: size, rows: count,
                rejected: rejected, ingestedAt: ingestedAt))
        }
        return out
    }
}
