import FetchCastCore
/// The raw field values of one row, as byte slices into the reader's buffers, and the code that
/// turns them into an ``EncodedEvent``. Shared by the CSV and JSON Lines parsers so that both
/// formats validate values identically.
struct RowFields {
    struct Slot {
        var start: UnsafeRawPointer?
        var count: Int
        /// 1-based column in the line where the field's value starts.
        var column: Int
        var present: Bool
    }

    /// How many columns there are.
    static let columnCount = TraceColumn.allCases.count

    /// Fixed storage for the columns, allocated once per reader: the hot loop writes
    /// through this pointer without copy-on-write or exclusivity checks.
    let slots: UnsafeMutablePointer<Slot>

    init() {
        slots = UnsafeMutablePointer<Slot>.allocate(capacity: Self.columnCount)
        slots.initialize(repeating: Slot(start: nil, count: 0, column: 0, present: false), count: Self.columnCount)
    }

    func deallocate() { slots.deallocate() }

    @inline(__always)
    func reset() {
        for i in 0..<Self.columnCount { slots[i] = Slot(start: nil, count: 0, column: 0, present: false) }
    }

    @inline(__always)
    func set(_ c: TraceColumn, _ p: UnsafeRawPointer?, _ n: Int, column col: Int) {
        slots[c.rawValue] = Slot(start: p, count: n, column: col, present: true)
    }

    @inline(__always)
    func bytes(_ c: TraceColumn) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: slots[c.rawValue].start, count: slots[c.rawValue].count)
    }

    @inline(__always)
    func count(_ c: TraceColumn) -> Int { slots[c.rawValue].count }

    @inline(__always)
    func column(_ c: TraceColumn) -> Int { slots[c.rawValue].column }

    @inline(__always)
    func isPresent(_ c: TraceColumn) -> Bool { slots[c.rawValue].present }
}

/// A row-level problem before the file name and line are attached.
struct RowProblem: Error {
    var column: Int
    var problem: TraceError.Problem
}

enum RowDecoder {
    @inline(__always)
    static func equals(_ b: UnsafeRawBufferPointer, _ s: StaticString) -> Bool {
        guard b.count == s.utf8CodeUnitCount else { return false }
        let p = s.utf8Start
        for i in 0..<b.count where b[i] != p[i] { return false }
        return true
    }

    static func text(_ b: UnsafeRawBufferPointer) -> String {
        let s = String(decoding: b.prefix(80), as: UTF8.self)
        return b.count > 80 ? s + "…" : s
    }

    @inline(__always)
    static func integer(_ f: RowFields, _ c: TraceColumn) throws(RowProblem) -> Int64? {
        let b = f.bytes(c)
        if b.count == 0 { return nil }
        var v: Int64 = 0
        for i in 0..<b.count {
            let d = b[i] &- 48
            guard d < 10, i < 18 else {
                throw RowProblem(column: f.column(c), problem: .badValue(
                    column: c.name, value: text(b), expected: "a non-negative whole number or nothing"))
            }
            v = v * 10 + Int64(d)
        }
        return v
    }

    /// Builds the event of a row.
    @inline(__always)
    static func decode(_ f: RowFields, line: Int64, symbols: SymbolTable, options: TraceOptions) throws(RowProblem) -> EncodedEvent {
        if f.count(.time) == 0 || f.count(.event) == 0 || (f.count(.app) == 0 && !equals(f.bytes(.event), "state")) {
            let c: TraceColumn = f.count(.time) == 0 ? .time : (f.count(.app) == 0 ? .app : .event)
            throw RowProblem(column: max(f.column(c), 1), problem: .emptyValue(column: c.name, expected: expectation(c)))
        }
        let kindBytes = f.bytes(.event)
        let kind: EventKind
        if equals(kindBytes, "launch") { kind = .launch }
        else if equals(kindBytes, "fetch") { kind = .fetch }
        else if equals(kindBytes, "publish") { kind = .publish }
        else if equals(kindBytes, "state") { kind = .state }
        else {
            throw RowProblem(column: f.column(.event), problem: .badValue(
                column: "event", value: text(kindBytes), expected: "launch, fetch, publish or state"))
        }
        let parsed: Timestamp.Parsed
        do {
            parsed = try Timestamp.parse(f.bytes(.time), defaultOffset: options.defaultUTCOffsetSeconds)
        } catch {
            throw RowProblem(column: f.column(.time) + error.offset, problem: .badTime("invalid time: " + error.problem, expected: error.expected))
        }
        let resultBytes = f.bytes(.result)
        var result: FetchResult?
        if resultBytes.count > 0 {
            if equals(resultBytes, "newData") { result = .newData }
            else if equals(resultBytes, "noData") { result = .noData }
            else if equals(resultBytes, "failed") { result = .failed }
            else {
                throw RowProblem(column: f.column(.result), problem: .badValue(
                    column: "result", value: text(resultBytes), expected: "newData, noData or failed"))
            }
            guard kind == .fetch else {
                throw RowProblem(column: f.column(.result), problem: .badValue(
                    column: "result", value: text(resultBytes), expected: "no result on a \(kind.name) event; results belong to fetch events"))
            }
        } else if kind == .fetch {
            throw RowProblem(column: max(f.column(.result), 1), problem: .emptyValue(
                column: "result", expected: "newData, noData or failed on every fetch event"))
        }
        var conditions = ConditionChange()
        if kind == .state || f.count(.network) | f.count(.power) | f.count(.battery) | f.count(.lowPower) != 0 {
            conditions = try ConditionFields.decode(f, kind: kind)
        }
        let deviceBytes = f.bytes(.device)
        let device: Int32
        if deviceBytes.count == 0 {
            guard kind == .publish else {
                throw RowProblem(column: max(f.column(.device), 1), problem: .emptyValue(
                    column: "device", expected: "a device id; only publish events may leave it empty"))
            }
            device = EncodedEvent.everyDevice
        } else {
            try refuseControlCharacters(f, .device)
            device = symbols.intern(deviceBytes)
        }
        try refuseControlCharacters(f, .app)
        let app = symbols.intern(f.bytes(.app))
        let bytes = try integer(f, .bytes)
        let duration = try integer(f, .durationMs)
        return EncodedEvent(
            timeMicros: parsed.micros, utcOffsetSeconds: parsed.utcOffsetSeconds, device: device, app: app,
            kind: kind, result: result, bytes: bytes, durationMs: duration, line: line, conditions: conditions)
    }

    /// Refuses an id longer than ``TraceLimits/maxIDBytes`` (the API could not ask for it) or
    /// holding a control character (U+0000–U+001F, U+007F): a NUL would cut the id short in C
    /// APIs (two devices becoming one), and the others break terminal and CSV output. The
    /// column points at the value (its first byte inside quotes).
    @inline(__always)
    static func refuseControlCharacters(_ f: RowFields, _ c: TraceColumn) throws(RowProblem) {
        let b = f.bytes(c)
        if b.count > TraceLimits.maxIDBytes {
            throw RowProblem(column: max(f.column(c), 1), problem: .idTooLong(column: c.name, bytes: b.count, limit: TraceLimits.maxIDBytes))
        }
        for i in 0..<b.count where b[i] < 0x20 || b[i] == 0x7F {
            throw RowProblem(column: max(f.column(c), 1), problem: .controlCharacter(
                column: c.name, value: escapedControls(b), scalar: b[i]))
        }
    }

    /// The text of an id with control characters written as `\u{XX}`, safe to print.
    static func escapedControls(_ b: UnsafeRawBufferPointer) -> String {
        var out = ""
        for scalar in text(b).unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7F {
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    static func expectation(_ c: TraceColumn) -> String {
        switch c {
        case .time: return Timestamp.expectedForm
        case .app: return "an app id such as com.example.news"
        case .event: return "launch, fetch, publish or state"
        default: return "a value"
        }
    }
}
