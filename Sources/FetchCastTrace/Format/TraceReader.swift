import FetchCastCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Streams the events of one trace file (CSV or JSON Lines, gzip or plain) in batches.
///
/// The whole file is never in memory: decoded bytes pass through one buffer a little larger
/// than the longest line allowed. The format is recognised by content: a first character `{`
/// means JSON Lines, anything else a CSV header.
///
/// - Complexity: O(n) in the bytes of the file, one pass.
package final class TraceReader {
    /// The path as given.
    package var path: String { input.raw.path }
    /// The file's size in bytes, when it is a regular file.
    package var size: Int64? { input.raw.size }
    /// Raw (possibly compressed) bytes read so far.
    package var bytesRead: Int64 { input.raw.bytesRead }
    /// Whether the file is gzip.
    package var isGzip: Bool { input.isGzip }
    /// The format, known after the first call to ``next(into:maxCount:onInvalid:)``.
    package private(set) var format: TraceFormat?
    /// Lines read so far.
    package var linesRead: Int64 { line - 1 }
    /// The symbols device and app names are interned in.
    package let symbols: SymbolTable

    let input: DecodedInput
    let options: TraceOptions
    private var buffer: UnsafeMutableRawPointer
    private var capacity: Int
    private var start = 0
    private var end = 0
    private var eof = false
    private var line: Int64 = 1
    /// Bytes decoded so far, and rows read (against the options' limits).
    private var decodedBytes: Int64 = 0
    private var rowsRead: Int64 = 0
    private var headerRead = false
    /// Header position → column, for CSV.
    private var columns: [TraceColumn] = []
    let fields = RowFields()
    let scratch: UnsafeMutableRawPointer
    private let scratchCapacity: Int

    /// Opens a trace.
    /// - Parameters:
    ///   - path: A file path, or `-` for standard input.
    ///   - symbols: Where device and app names are interned.
    ///   - options: How values are read.
    /// - Throws: ``TraceError`` when the file cannot be opened.
    package init(path: String, symbols: SymbolTable, options: TraceOptions = TraceOptions()) throws(TraceError) {
        input = DecodedInput(try RawInput(path: path))
        self.symbols = symbols
        self.options = options
        capacity = options.maxLineBytes + (1 << 20)
        buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        scratchCapacity = options.maxLineBytes + 16
        scratch = UnsafeMutableRawPointer.allocate(byteCount: scratchCapacity, alignment: 16)
    }

    deinit {
        buffer.deallocate()
        scratch.deallocate()
        fields.deallocate()
    }

    /// The SHA-256 of the raw bytes read so far, computed as they were read: the whole file's
    /// once ``next(into:maxCount:onInvalid:)`` returned `false`.
    package var sha256: String { input.raw.sha256 }

    private func error(_ problem: TraceError.Problem, line: Int64, column: Int) -> TraceError {
        TraceError(file: path, line: Int(line), column: column, problem: problem)
    }

    /// Reads more decoded bytes; returns false at end of input.
    private func fill() throws(TraceError) -> Bool {
        if eof { return false }
        if start > 0 && (start > capacity / 2 || end == capacity) {
            let n = end - start
            if n > 0 { memmove(buffer, buffer + start, n) }
            start = 0
            end = n
        }
        if end == capacity { return true }
        let n: Int
        do {
            n = try input.read(into: UnsafeMutableRawBufferPointer(start: buffer + end, count: capacity - end))
        } catch {
            throw withCompleteLines(error)
        }
        if n == 0 { eof = true; return false }
        decodedBytes += Int64(n)
        if let limit = options.maxDecodedBytes, decodedBytes > limit {
            throw error(.decodedTooLarge(limit: limit), line: 0, column: 0)
        }
        end += n
        return true
    }

    /// A truncated gzip error with the number of whole lines decoded before the cut: the lines
    /// already handed out plus the line breaks still buffered.
    private func withCompleteLines(_ error: TraceError) -> TraceError {
        guard case .truncatedGzip(let compressed, nil) = error.problem else { return error }
        var lines = line - 1
        var p = buffer + start
        var left = end - start
        while left > 0, let nl = memchr(p, 0x0A, left) {
            lines += 1
            let next = UnsafeMutableRawPointer(nl) + 1
            left -= p.distance(to: next)
            p = next
        }
        var annotated = error
        annotated.problem = .truncatedGzip(compressedBytes: compressed, completeLines: lines)
        return annotated
    }

    /// Finds the next record: returns its bytes (without the line break) and the line it starts on.
    /// In CSV, a quoted field may hold line breaks; then the record spans lines.
    private func nextRecord() throws(TraceError) -> (UnsafeRawBufferPointer, Int64)? {
        var scanFrom = start
        while true {
            let avail = end - scanFrom
            if avail > 0, let nl = memchr(buffer + scanFrom, 0x0A, avail) {
                let nlIndex = buffer.distance(to: UnsafeMutableRawPointer(nl))
                var recordEnd = nlIndex
                var extraLines: Int64 = 0
                if format == .csv, memchr(buffer + start, 0x22, recordEnd - start) != nil {
                    // Quote-aware scan from the record start.
                    switch scanQuoted(from: start) {
                    case .complete(let e, let lines):
                        recordEnd = e
                        extraLines = lines
                    case .needMore:
                        if end - start > options.maxLineBytes {
                            throw error(.lineTooLong(limit: options.maxLineBytes), line: line, column: 1)
                        }
                        if try !fill() {
                            // The input ends inside this record: it is the last one, without a
                            // final line break (or its quote is never closed).
                            return try lastRecord()
                        }
                        scanFrom = start
                        continue
                    }
                }
                let recordStart = start
                var contentEnd = recordEnd
                if contentEnd > recordStart && buffer.load(fromByteOffset: contentEnd - 1, as: UInt8.self) == 0x0D { contentEnd -= 1 }
                if contentEnd - recordStart > options.maxLineBytes {
                    throw error(.lineTooLong(limit: options.maxLineBytes), line: line, column: 1)
                }
                start = recordEnd + 1
                let recordLine = line
                line += 1 + extraLines
                return (UnsafeRawBufferPointer(start: buffer + recordStart, count: contentEnd - recordStart), recordLine)
            }
            scanFrom = end
            if end - start > options.maxLineBytes {
                throw error(.lineTooLong(limit: options.maxLineBytes), line: line, column: 1)
            }
            let startBefore = start
            if try !fill() {
                // Last line without a line break.
                return try lastRecord()
            }
            scanFrom -= (startBefore - start)
        }
    }

    /// The rest of the input as the last record, which has no final line break; `nil` when
    /// nothing is left.
    private func lastRecord() throws(TraceError) -> (UnsafeRawBufferPointer, Int64)? {
        guard end > start else { return nil }
        var extraLines: Int64 = 0
        if format == .csv, memchr(buffer + start, 0x22, end - start) != nil,
           case .needMore(let lines, let openQuote) = scanQuoted(from: start) {
            if let openQuote {
                throw error(.unterminatedQuote, line: line, column: openQuote - start + 1)
            }
            extraLines = lines
        }
        let recordStart = start
        var contentEnd = end
        if buffer.load(fromByteOffset: contentEnd - 1, as: UInt8.self) == 0x0D { contentEnd -= 1 }
        if contentEnd - recordStart > options.maxLineBytes {
            throw error(.lineTooLong(limit: options.maxLineBytes), line: line, column: 1)
        }
        start = end
        let recordLine = line
        line += 1 + extraLines
        return (UnsafeRawBufferPointer(start: buffer + recordStart, count: contentEnd - recordStart), recordLine)
    }

    /// Where a quote-aware scan stopped: at the record's line break (its index and the line
    /// breaks inside quotes before it), or at the end of the buffered input (the line breaks
    /// inside quotes so far, and the index of the quote still open, if any).
    private enum QuotedScan { case complete(Int, Int64), needMore(lines: Int64, openQuote: Int?) }

    /// Finds where a record that holds a quote ends. Quotes follow the same rules as
    /// `splitCSV`: a quote opens a quoted field only at the start of a field, `""` inside a
    /// quoted field is one quote, and a quote inside an unquoted field is a literal character
    /// (so one stray quote cannot swallow the lines after it).
    private func scanQuoted(from s: Int) -> QuotedScan {
        var inQuotes = false
        var atFieldStart = true
        var justClosed = false
        var openedAt = s
        var lines: Int64 = 0
        var i = s
        while i < end {
            let b = buffer.load(fromByteOffset: i, as: UInt8.self)
            if b == 0x22 {
                if inQuotes {
                    inQuotes = false
                    justClosed = true
                } else if atFieldStart || justClosed {
                    // A field's opening quote, or the second quote of a doubled one.
                    if atFieldStart { openedAt = i }
                    inQuotes = true
                    justClosed = false
                }
                atFieldStart = false
            } else {
                justClosed = false
                if b == 0x0A {
                    if !inQuotes { return .complete(i, lines) }
                    lines += 1
                }
                atFieldStart = !inQuotes && b == 0x2C
            }
            i += 1
        }
        return .needMore(lines: lines, openQuote: inQuotes ? openedAt : nil)
    }

    @inline(__always)
    private static func isASCII(_ r: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        let n = r.count
        var acc: UInt64 = 0
        while i + 8 <= n {
            acc |= r.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        while i < n { acc |= UInt64(r[i]); i += 1 }
        return acc & 0x8080_8080_8080_8080 == 0
    }

    private func checkUTF8(_ r: UnsafeRawBufferPointer, line: Int64) throws(TraceError) {
        if Self.isASCII(r) { return }
        if String(validating: r, as: UTF8.self) == nil {
            var parser = Unicode.UTF8.ForwardParser()
            var iterator = r.makeIterator()
            var offset = 0
            var column = 1
            scan: while true {
                switch parser.parseScalar(from: &iterator) {
                case .valid(let encoded): offset += encoded.count
                case .error(let length): column = offset + 1; _ = length; break scan
                case .emptyInput: break scan
                }
            }
            throw error(.notUTF8, line: line, column: column)
        }
    }

    /// Reads up to `maxCount` events, appending them to `batch`.
    ///
    /// - Parameters:
    ///   - batch: Where events are appended.
    ///   - maxCount: The most events to append in this call.
    ///   - onInvalid: When given, an invalid row is passed here with its line text and skipped;
    ///     when `nil`, it is thrown. File-level problems (gzip, header, encoding of the header,
    ///     over-long lines) are always thrown.
    /// - Returns: `false` once the end of the file is reached and nothing more was read.
    /// - Throws: ``TraceError``.
    package func next(
        into batch: inout [EncodedEvent], maxCount: Int = 8192,
        onInvalid: ((TraceError, String) -> Void)? = nil
    ) throws(TraceError) -> Bool {
        if !headerRead { try readHeader() }
        var added = 0
        while added < maxCount {
            guard let (record, recordLine) = try nextRecord() else { return added > 0 }
            // Blank lines count: a body of nothing but line breaks must not hold the reader.
            rowsRead += 1
            if let limit = options.maxEvents, rowsRead > limit {
                // Not a bad row: the input as a whole is too long (never skipped).
                throw error(.tooManyEvents(limit: limit), line: recordLine, column: 1)
            }
            if record.count == 0 { continue }
            do throws(TraceError) {
                try checkUTF8(record, line: recordLine)
                let event: EncodedEvent
                do throws(RowProblem) {
                    if format == .csv {
                        try splitCSV(record)
                    } else {
                        try splitJSON(record)
                    }
                    event = try RowDecoder.decode(fields, line: recordLine, symbols: symbols, options: options)
                } catch {
                    throw self.error(error.problem, line: recordLine, column: error.column)
                }
                batch.append(event)
                added += 1
            } catch {
                guard let onInvalid else { throw error }
                onInvalid(error, String(decoding: record, as: UTF8.self))
            }
        }
        return true
    }

    private func readHeader() throws(TraceError) {
        headerRead = true
        // Skip a UTF-8 byte order mark.
        _ = try fill()
        while end - start < 3 && !eof { _ = try fill() }
        if end - start >= 3 && buffer.load(fromByteOffset: start, as: UInt8.self) == 0xEF
            && buffer.load(fromByteOffset: start + 1, as: UInt8.self) == 0xBB
            && buffer.load(fromByteOffset: start + 2, as: UInt8.self) == 0xBF {
            start += 3
        }
        // Skip leading blank lines to find the first character.
        var i = start
        while true {
            while i < end {
                let b = buffer.load(fromByteOffset: i, as: UInt8.self)
                if b != 0x0A && b != 0x0D && b != 0x20 && b != 0x09 { break }
                i += 1
            }
            if i < end { break }
            let before = start
            if try !fill() { throw error(.empty, line: 0, column: 0) }
            i -= before - start
        }
        if buffer.load(fromByteOffset: i, as: UInt8.self) == UInt8(ascii: "{") {
            format = .jsonLines
            return
        }
        format = .csv
        var headerRecord: (UnsafeRawBufferPointer, Int64)?
        repeat {
            headerRecord = try nextRecord()
        } while headerRecord.map({ $0.0.count == 0 }) == true
        guard let (header, headerLine) = headerRecord else { throw error(.empty, line: 0, column: 0) }
        if let first = header.firstIndex(where: { $0 != 0x20 && $0 != 0x09 }), header[first] == UInt8(ascii: "[") {
            throw error(.jsonArray, line: headerLine, column: first + 1)
        }
        if let cr = header.firstIndex(of: 0x0D) { throw error(.carriageReturnLineEnds, line: headerLine, column: cr + 1) }
        try checkUTF8(header, line: headerLine)
        var seen = Set<TraceColumn>()
        var columnStart = 0
        var position = 0
        func finish(_ endIndex: Int) throws(TraceError) {
            var s = columnStart, e = endIndex
            while s < e && (header[s] == 0x20 || header[s] == 0x09) { s += 1 }
            while e > s && (header[e - 1] == 0x20 || header[e - 1] == 0x09) { e -= 1 }
            if e - s >= 2 && header[s] == 0x22 && header[e - 1] == 0x22 { s += 1; e -= 1 }
            let name = UnsafeRawBufferPointer(rebasing: header[s..<e])
            guard let column = TraceColumn(name: name) else {
                throw error(.unknownColumn(String(decoding: name, as: UTF8.self)), line: headerLine, column: columnStart + 1)
            }
            guard seen.insert(column).inserted else {
                throw error(.duplicateColumn(column.name), line: headerLine, column: columnStart + 1)
            }
            columns.append(column)
            position += 1
        }
        for j in 0..<header.count where header[j] == UInt8(ascii: ",") {
            try finish(j)
            columnStart = j + 1
        }
        try finish(header.count)
        for c in TraceColumn.allCases where c.isRequired && !seen.contains(c) {
            throw error(.missingColumn(c.name), line: headerLine, column: 1)
        }
    }

    private func splitCSV(_ r: UnsafeRawBufferPointer) throws(RowProblem) {
        fields.reset()
        let columns = self.columns
        let base = r.baseAddress!
        let n = r.count
        var i = 0
        var index = 0
        var scratchUsed = 0
        let expected = columns.count
        while true {
            let fieldStart = i
            var valueStart: UnsafeRawPointer = base + i
            var valueCount = 0
            var valueColumn = fieldStart + 1
            if i < n && r[i] == 0x22 {
                // Quoted field: unescape into scratch.
                let out = scratch + scratchUsed
                var k = 0
                i += 1
                var closed = false
                while i < n {
                    let b = r[i]
                    if b == 0x22 {
                        if i + 1 < n && r[i + 1] == 0x22 { out.storeBytes(of: 0x22, toByteOffset: k, as: UInt8.self); k += 1; i += 2; continue }
                        closed = true
                        i += 1
                        break
                    }
                    out.storeBytes(of: b, toByteOffset: k, as: UInt8.self)
                    k += 1
                    i += 1
                }
                guard closed else { throw RowProblem(column: fieldStart + 1, problem: .unterminatedQuote) }
                guard i == n || r[i] == 0x2C else {
                    throw RowProblem(column: i + 1, problem: .badValue(
                        column: index < expected ? columns[index].name : "field", value: RowDecoder.text(UnsafeRawBufferPointer(rebasing: r[fieldStart..<min(n, i + 1)])),
                        expected: "a ',' or the end of the line after a closing quote"))
                }
                valueStart = UnsafeRawPointer(out)
                valueCount = k
                valueColumn = fieldStart + 2  // the first byte inside the quotes
                scratchUsed += k
            } else {
                while i < n && r[i] != 0x2C { i += 1 }
                valueCount = i - fieldStart
            }
            if index < expected {
                fields.set(columns[index], valueStart, valueCount, column: valueColumn)
            }
            index += 1
            if i >= n { break }
            i += 1  // the comma
            if i == n {
                // Trailing comma: one more, empty field.
                if index < expected { fields.set(columns[index], base + i, 0, column: i + 1) }
                index += 1
                break
            }
        }
        guard index == expected else {
            // Rows that ran together at bare CRs (the header ended in LF or CRLF, the rows not).
            if let cr = r.firstIndex(of: 0x0D) { throw RowProblem(column: cr + 1, problem: .carriageReturnLineEnds) }
            throw RowProblem(column: 1, problem: .fieldCount(found: index, expected: expected))
        }
    }
}
