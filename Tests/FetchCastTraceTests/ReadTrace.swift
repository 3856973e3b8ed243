import FetchCastCore
import FetchCastTrace
import FetchCastTestSupport

/// Everything a reader produced from one file.
struct ReadTrace {
    var events: [TraceEvent]
    var lines: [Int64]
    var format: TraceFormat?
    var isGzip: Bool
    var sha256: String?
}

/// Reads a whole trace file with a fresh symbol table.
func readTrace(_ path: String, options: TraceOptions = TraceOptions()) throws(TraceError) -> ReadTrace {
    let symbols = SymbolTable()
    let reader = try TraceReader(path: path, symbols: symbols, options: options)
    var batch: [EncodedEvent] = []
    while try reader.next(into: &batch, maxCount: 3) {}
    return ReadTrace(
        events: batch.map { TraceEvent($0, symbols: symbols) }, lines: batch.map(\.line),
        format: reader.format, isGzip: reader.isGzip, sha256: reader.sha256)
}

/// Reads a trace written to a temporary file from text.
func readTrace(text: String, name: String = "t.csv", options: TraceOptions = TraceOptions()) throws -> ReadTrace {
    let dir = try TemporaryDirectory()
    return try readTrace(try dir.write(name, text), options: options)
}

/// Reads a trace written from text, skipping invalid rows: what was read, and the error of
/// each row skipped.
func readTraceSkipping(text: String, name: String = "t.csv") throws -> (trace: ReadTrace, skipped: [TraceError]) {
    let dir = try TemporaryDirectory()
    let symbols = SymbolTable()
    let reader = try TraceReader(path: try dir.write(name, text), symbols: symbols)
    var batch: [EncodedEvent] = []
    var skipped: [TraceError] = []
    while try reader.next(into: &batch, maxCount: 3, onInvalid: { error, _ in skipped.append(error) }) {}
    let trace = ReadTrace(
        events: batch.map { TraceEvent($0, symbols: symbols) }, lines: batch.map(\.line),
        format: reader.format, isGzip: reader.isGzip, sha256: reader.sha256)
    return (trace, skipped)
}

/// The error reading a trace throws, or `nil` when it reads cleanly.
func traceError(_ path: String, options: TraceOptions = TraceOptions()) -> TraceError? {
    do {
        _ = try readTrace(path, options: options)
        return nil
    } catch {
        return error
    }
}

/// The error reading a trace written from bytes throws.
func traceError(bytes: [UInt8], name: String = "t.csv", options: TraceOptions = TraceOptions()) throws -> TraceError? {
    let dir = try TemporaryDirectory()
    return traceError(try dir.write(name, bytes: bytes), options: options)
}

/// The error reading a trace written from text throws.
func traceError(text: String, name: String = "t.csv", options: TraceOptions = TraceOptions()) throws -> TraceError? {
    try traceError(bytes: Array(text.utf8), name: name, options: options)
}
