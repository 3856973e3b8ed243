import FetchCastCore
import FetchCastTrace

/// Choices for an ingest, whatever the engine (``EventLogWriter/append(path:name:options:)``,
/// ``Ingestor``).
public struct IngestOptions {
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
    /// Whether a file without a row (a header only) is recorded in `files` (the CLI's
    /// choice: `fetchcast files` lists what was ingested); when `false` it adds nothing and
    /// its result says 0 events.
    public var recordsEmptyFiles = true
    /// Whether rows whose events the store already holds are added again (the behaviour
    /// before duplicates were skipped); by default they are skipped and counted in
    /// ``FileIngestResult/duplicates``.
    public var keepsDuplicates = false

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
