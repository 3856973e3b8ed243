import FetchCastCore
import FetchCastStore
import FetchCastTrace

/// Where an evaluation reads its events from.
public enum EvaluationInput {
    /// Trace files (CSV or JSON Lines, gzip or plain; `-` is standard input), read as
    /// `fetchcast ingest` reads them, in the order given.
    case files([String])
    /// Every event of a store, in time order.
    case store(Store)
    /// Events given in memory (for tests and embedding apps), in the order given.
    case events([TraceEvent])
}

/// An input's identity, recorded in `run.json`.
public struct InputDigest: Sendable, Hashable, Codable {
    /// The path as given, or the file name recorded in the store.
    public var path: String
    /// The SHA-256 of the input's raw bytes.
    public var sha256: String
    /// Events read from it (before `--devices`/`--from`/`--to`).
    public var events: Int64
}
