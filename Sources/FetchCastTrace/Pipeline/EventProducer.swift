import FetchCastCore
/// What an ``EventSource`` reads on its own thread: a trace file (``TraceReader``) or one of the
/// store's scans (which FetchCastStore implements, so that this layer knows nothing of SQLite).
///
/// The source owns the producer once it is handed over: every call below is made on the
/// source's thread, one after the other.
package protocol EventProducer: AnyObject, SendableMetatype {
    /// Why producing can fail.
    associatedtype Failure: Error & Sendable
    /// What the source hands over at the end (a trace's hash and size; nothing for a scan).
    associatedtype Summary: Sendable

    /// The table the events' device and app symbols are names in, when they are symbols (the
    /// names it gains while producing are passed along with each batch); `nil` when the events
    /// carry numbers of the producer's own (the store's ids), with no names to pass along.
    var symbolTable: SymbolTable? { get }

    /// Appends the next events to `batch`.
    /// - Parameters:
    ///   - batch: Where events are appended (empty on entry).
    ///   - maxCount: The most events to append in this call.
    ///   - onInvalid: When given, a row the producer refuses is passed here with its text and
    ///     skipped; when `nil`, it is thrown.
    /// - Returns: `false` once there is nothing more to produce.
    func next(into batch: inout [EncodedEvent], maxCount: Int, onInvalid: ((TraceError, String) -> Void)?) throws(Failure) -> Bool

    /// Where the events last appended came from, when the producer reads several files (the
    /// store's scans); `nil` when the consumer knows (one trace file).
    var batchFile: String? { get }

    /// Raw bytes read so far (0 when not measured).
    var bytesRead: Int64 { get }

    /// Ends producing, after the last batch or a failure (a scan ends its read transaction
    /// here, on the thread that read), and says what the consumer is owed at the end.
    func finish() -> Summary
}

extension TraceReader: EventProducer {
    /// A trace's identity, known once every byte of it was read.
    package struct Summary: Sendable {
        /// The SHA-256 of the raw bytes, computed as they streamed by.
        package var sha256: String
        package var bytesRead: Int64
        package var format: TraceFormat?
        package var isGzip: Bool
    }

    package var symbolTable: SymbolTable? { symbols }

    package var batchFile: String? { nil }

    package func finish() -> Summary { Summary(sha256: sha256, bytesRead: bytesRead, format: format, isGzip: isGzip) }
}
