// libFuzzer entry for the trace reader: what `fetchcast ingest` does with a file's bytes (gzip
// detected by its magic, decoded, rows split as CSV or JSON Lines, timestamps parsed), with the
// reader's promises checked on every input. Built and run by scripts/fuzz.sh, which compiles
// the FetchCastCore and FetchCastTrace sources with `-sanitize=fuzzer,address` next to this
// file; it is not part of the SwiftPM package.
//
// A broken promise stops the run through `fatalError`, which libFuzzer reports as a crash
// with the input that caused it.

import FetchCastCore
import FetchCastTrace
import Glibc

/// Where each input is written for the reader, which reads files by path: one file per
/// process (tmpfs when the script points `FUZZ_SCRATCH` there).
nonisolated(unsafe) private var inputPath: String = {
    let directory = getenv("FUZZ_SCRATCH").map { String(cString: $0) } ?? "/tmp"
    return "\(directory)/fetchcast-fuzz-input-\(getpid())"
}()

/// The default options (what ingest uses), and a tiny line limit so that the over-long-line
/// and buffer-refill paths are reached with short inputs.
private let optionSets = [
    TraceOptions(),
    TraceOptions(defaultUTCOffsetSeconds: -9000, maxLineBytes: 48),
]

@_cdecl("LLVMFuzzerTestOneInput")
public func traceReaderFuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    write(bytes, to: inputPath)
    for options in optionSets {
        check(bytes, options: options)
    }
    checkTimestamp(bytes)
    return 0
}

/// What one pass over a file produced: the events (names resolved) and the row errors skipped,
/// or the error that stopped it.
private struct Pass {
    var events: [TraceEvent] = []
    var lines: [Int64] = []
    var skipped: [TraceError] = []
    var thrown: TraceError?
    var format: TraceFormat?
    var isGzip = false
    var sha256: String?
}

/// Reads the input file the way ingest does: batches of events, invalid rows thrown (the
/// default) or skipped (`--keep-going`).
private func read(options: TraceOptions, keepGoing: Bool) -> Pass {
    var pass = Pass()
    let symbols = SymbolTable()
    var batch: [EncodedEvent] = []
    do {
        let reader = try TraceReader(path: inputPath, symbols: symbols, options: options)
        defer {
            pass.format = reader.format
            pass.isGzip = reader.isGzip
            pass.sha256 = reader.sha256
        }
        var skipped: [TraceError] = []
        let onInvalid: ((TraceError, String) -> Void)? = keepGoing ? { error, _ in skipped.append(error) } : nil
        do {
            while try reader.next(into: &batch, maxCount: 5, onInvalid: onInvalid) {}
        } catch {
            pass.thrown = error
        }
        pass.skipped = skipped
    } catch {
        pass.thrown = error
    }
    pass.events = batch.map { TraceEvent($0, symbols: symbols) }
    pass.lines = batch.map(\.line)
    return pass
}

private func check(_ bytes: UnsafeRawBufferPointer, options: TraceOptions) {
    let strict = read(options: options, keepGoing: false)
    let lenient = read(options: options, keepGoing: true)
    let gzip = bytes.count >= 2 && bytes[0] == 0x1F && bytes[1] == 0x8B
    // Plain input: lines and columns cannot point past the bytes.
    let lineCount = gzip ? Int.max : bytes.reduce(1) { $0 + ($1 == 0x0A ? 1 : 0) }
    let columnLimit = gzip ? Int.max : bytes.count + 1

    checkPass(strict, gzip: gzip, bytes: bytes, lineCount: lineCount, columnLimit: columnLimit)
    checkPass(lenient, gzip: gzip, bytes: bytes, lineCount: lineCount, columnLimit: columnLimit)

    // Skipping invalid rows changes nothing before the first one, and the first problem is the
    // same either way: skipped when it is a row's, thrown when it is the file's.
    require(strict.skipped.isEmpty, "a strict read skips nothing", nil)
    require(lenient.events.starts(with: strict.events), "keep-going reads every event a strict read does", strict.thrown)
    if let first = strict.thrown {
        require(lenient.skipped.first == first || (lenient.skipped.isEmpty && lenient.thrown == first),
                "the first problem is the same with and without keep-going", first)
    } else {
        require(lenient.thrown == nil && lenient.skipped.isEmpty && lenient.events == strict.events,
                "a clean file reads the same with keep-going", lenient.thrown)
    }
}

/// What holds for any one pass: errors name their place, events are well formed, a clean
/// read hashes the raw bytes.
private func checkPass(_ pass: Pass, gzip: Bool, bytes: UnsafeRawBufferPointer, lineCount: Int, columnLimit: Int) {
    require(pass.isGzip == gzip, "gzip is recognised by its magic bytes", pass.thrown)
    for error in pass.skipped + [pass.thrown].compactMap({ $0 }) {
        checkPlace(error, lineCount: lineCount, columnLimit: columnLimit)
    }
    for error in pass.skipped {
        require(isRowProblem(error.problem), "only row problems are skipped", error)
    }
    require(pass.lines == pass.lines.sorted() && Set(pass.lines).count == pass.lines.count,
            "events come out in line order, one per line", pass.thrown)
    require(pass.lines.allSatisfy { $0 >= 1 && $0 <= lineCount }, "every event names its line", pass.thrown)
    for event in pass.events {
        checkTime(micros: event.timeMicros, utcOffsetSeconds: event.utcOffsetSeconds)
        require(!event.app.isEmpty, "every event has an app", nil)
        require(event.kind == .publish || !event.device.isEmpty, "only publishes may omit the device", nil)
        require((event.result != nil) == (event.kind == .fetch), "results belong to fetches and every fetch has one", nil)
        require(!(event.device + event.app).unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F },
                "ids hold no control characters", nil)
        require((event.bytes ?? 0) >= 0 && (event.durationMs ?? 0) >= 0, "counts are non-negative", nil)
    }
    if pass.thrown == nil {
        require(pass.sha256 == SHA256.hex(of: bytes), "the content hash is the hash of the raw bytes", nil)
        if !pass.events.isEmpty { require(pass.format != nil, "a file with events has a format", nil) }
    }
}

/// Every error names the input file; a row's problem names a line (≥ 1) and column (≥ 1)
/// inside the input, a file's problem names no line; and its message renders.
private func checkPlace(_ error: TraceError, lineCount: Int, columnLimit: Int) {
    require(error.file == inputPath && error.description.hasPrefix(inputPath + (error.line > 0 ? ":" : ": ")),
            "the error names the file", error)
    require(!error.problem.message.isEmpty, "the error says what is wrong", error)
    if isRowProblem(error.problem) {
        require(error.line >= 1 && error.line <= lineCount, "a row problem names a line of the input", error)
        require(error.column >= 1 && error.column <= columnLimit, "a row problem names a column of the line", error)
    } else {
        require(error.line == 0 && error.column == 0, "a file problem names no line", error)
    }
    if case .truncatedGzip(let compressed, let lines) = error.problem {
        require(lines != nil && lines! >= 0, "a truncated gzip error counts the complete lines", error)
        require(compressed >= 0, "a truncated gzip error gives the compressed offset", error)
    }
}

private func isRowProblem(_ problem: TraceError.Problem) -> Bool {
    switch problem {
    case .cannotOpen, .cannotWrite, .empty, .truncatedGzip, .corruptGzip: return false
    default: return true
    }
}

/// A parsed time's offset is in range, and the time formats (in its own offset) to text that
/// parses back to the same instant (Unix seconds just after 1970 with a negative `--utc-offset`
/// format to a local 1969 date, which parses back too) — when that text's year has four digits.
private func checkTime(micros: Int64, utcOffsetSeconds: Int32) {
    require(abs(utcOffsetSeconds) <= 18 * 3600, "offsets are within ±18:00", nil)
    let text = Timestamp.format(micros: micros, utcOffsetSeconds: utcOffsetSeconds)
    guard Int(text.prefix(4)) != nil, text.dropFirst(4).first == "-" else { return }
    var copy = text
    let again = copy.withUTF8 { try? Timestamp.parse(UnsafeRawBufferPointer($0)) }
    require(again?.micros == micros && again?.utcOffsetSeconds == utcOffsetSeconds,
            "a parsed time formats to \(text), which parses back to it", nil)
}

/// The timestamp parsers on the input's first line: a failure points inside the field.
private func checkTimestamp(_ bytes: UnsafeRawBufferPointer) {
    let field = UnsafeRawBufferPointer(rebasing: bytes.prefix { $0 != 0x0A && $0 != 0x2C }.prefix(64))
    do {
        let parsed = try Timestamp.parse(field, defaultOffset: 3600)
        checkTime(micros: parsed.micros, utcOffsetSeconds: parsed.utcOffsetSeconds)
    } catch {
        require(error.offset >= 0 && error.offset <= field.count, "a timestamp failure points inside the field", nil)
        require(!error.problem.isEmpty && !error.expected.isEmpty, "a timestamp failure says what was expected", nil)
    }
    let text = String(decoding: field, as: UTF8.self)
    _ = Timestamp.parseArgument(text)
    if let offset = Timestamp.parseOffset(text) {
        require(abs(offset) <= 18 * 3600 && Timestamp.parseOffset(Timestamp.formatOffset(offset)) == offset,
                "a parsed offset is in range and formats back to itself", nil)
    }
}

/// Stops the run with the promise broken. Not inlined: Swift 6.3.1's optimizer crashes
/// (SIL DCE, "critical successors") compiling `check(_:options:)` with it inlined.
@inline(never)
private func require(_ condition: Bool, _ promise: @autoclosure () -> String, _ error: TraceError?) {
    if !condition {
        fatalError("broken promise: \(promise())" + (error.map { " — \($0) [\($0.problem)]" } ?? ""))
    }
}

/// Writes the input to the scratch file, replacing what was there.
private func write(_ bytes: UnsafeRawBufferPointer, to path: String) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    guard fd >= 0 else { fatalError("cannot write the fuzz input to \(path): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    var done = 0
    while done < bytes.count {
        let n = Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
        guard n > 0 else { fatalError("cannot write the fuzz input to \(path): \(String(cString: strerror(errno)))") }
        done += n
    }
}
