extension Store: EventLogWriter {
    /// The database file's path.
    public var location: String { path }

    /// Ingests the file with an ``Ingestor`` (exactly what `fetchcast ingest` did before the seam).
    public func append(path: String, name: String?, options: IngestOptions) throws -> FileIngestResult {
        try Ingestor(store: self, options: options).ingest(path: path, name: name)
    }

    /// Device names in byte order (SQLite's `BINARY` collation).
    public func sortedDeviceNames() throws(StoreError) -> [String] {
        try names(table: "devices")
    }

    /// App names in byte order.
    public func sortedAppNames() throws(StoreError) -> [String] {
        try names(table: "apps")
    }

    /// The number of rows of `files`.
    public func fileCount() throws(StoreError) -> Int64 {
        try connection.scalarInt("SELECT count(*) FROM files")
    }

    private func names(table: String) throws(StoreError) -> [String] {
        let s = try connection.prepare("SELECT name FROM \(table) ORDER BY name")
        var out: [String] = []
        while try s.step() { out.append(s.text(0)) }
        return out
    }
}
