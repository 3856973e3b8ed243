/// What happened to one input file.
public struct FileIngestResult: Sendable, Hashable, Codable {
    /// Whether the file's events were added or it had been ingested before.
    public enum Status: String, Sendable, Hashable, Codable {
        case ingested
        case alreadyIngested = "already_ingested"
    }

    /// The path as given.
    public var path: String
    /// SHA-256 of the file's bytes.
    public var sha256: String
    /// What happened.
    public var status: Status
    /// Events added (0 when already ingested).
    public var events: Int64
    /// Rows not added because the store already held their events (0 with
    /// ``Ingestor/Options/keepsDuplicates``, and when already ingested).
    public var duplicates: Int64
    /// Rows rejected under `--skip-invalid`.
    public var rejected: Int64
    /// Raw bytes read.
    public var bytes: Int64
    /// Wall-clock seconds spent.
    public var seconds: Double
    /// `csv` or `jsonl`.
    public var format: String
    /// Whether the file was gzip.
    public var gzip: Bool
}

/// Progress of the file being ingested, for a live line on a terminal.
public struct IngestProgress: Sendable, Hashable {
    /// The path.
    public var path: String
    /// Raw bytes read so far.
    public var bytesRead: Int64
    /// The file's size, when known.
    public var totalBytes: Int64?
    /// Events read so far.
    public var events: Int64
    /// Seconds since the file started.
    public var seconds: Double
}
