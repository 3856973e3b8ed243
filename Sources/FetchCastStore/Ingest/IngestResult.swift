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
    /// ``IngestOptions/keepsDuplicates``, and when already ingested).
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

    /// Creates a result (an engine's answer to ``EventLogWriter/append(path:name:options:)``).
    package init(
        path: String, sha256: String, status: Status, events: Int64, duplicates: Int64, rejected: Int64, bytes: Int64,
        seconds: Double, format: String, gzip: Bool
    ) {
        self.path = path
        self.sha256 = sha256
        self.status = status
        self.events = events
        self.duplicates = duplicates
        self.rejected = rejected
        self.bytes = bytes
        self.seconds = seconds
        self.format = format
        self.gzip = gzip
    }
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

    /// Creates a progress report.
    package init(path: String, bytesRead: Int64, totalBytes: Int64?, events: Int64, seconds: Double) {
        self.path = path
        self.bytesRead = bytesRead
        self.totalBytes = totalBytes
        self.events = events
        self.seconds = seconds
    }
}
