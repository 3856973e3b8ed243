extension TraceReader {
    /// Splits one JSON Lines record (a flat object) into fields.
    ///
    /// Values may be strings, numbers or `null` (`true` and `false` are rejected: no column is
    /// a boolean); strings are unescaped into scratch memory. Nested objects and arrays are
    /// rejected: the format is flat.
    func splitJSON(_ r: UnsafeRawBufferPointer) throws(RowProblem) {
        fields.reset()
        let n = r.count
        var i = 0
        var scratchUsed = 0
        @inline(__always) func skipSpace() {
            while i < n, r[i] == 0x20 || r[i] == 0x09 || r[i] == 0x0D { i += 1 }
        }
        /// A problem at the current byte, or at `offset` (0-based) when given.
        func fail(_ detail: String, at offset: Int? = nil) -> RowProblem {
            RowProblem(column: (offset ?? min(i, n)) + 1, problem: .badJSON(detail))
        }
        func string() throws(RowProblem) -> (UnsafeRawPointer, Int) {
            // r[i] is the opening quote.
            i += 1
            let begin = i
            while i < n && r[i] != 0x22 && r[i] != 0x5C { i += 1 }
            if i < n && r[i] == 0x22 {
                let result = (r.baseAddress! + begin, i - begin)
                i += 1
                return result
            }
            // Escapes present: copy into scratch.
            let out = scratch + scratchUsed
            var k = i - begin
            out.copyMemory(from: r.baseAddress! + begin, byteCount: k)
            while i < n {
                let b = r[i]
                if b == 0x22 {
                    i += 1
                    scratchUsed += k
                    return (UnsafeRawPointer(out), k)
                }
                if b == 0x5C {
                    guard i + 1 < n else { break }
                    let e = r[i + 1]
                    // Escape problems point at the backslash that starts the escape.
                    let escapeStart = i
                    i += 2
                    var scalar: UInt32
                    switch e {
                    case 0x22: scalar = 0x22
                    case 0x5C: scalar = 0x5C
                    case 0x2F: scalar = 0x2F
                    case UInt8(ascii: "b"): scalar = 0x08
                    case UInt8(ascii: "f"): scalar = 0x0C
                    case UInt8(ascii: "n"): scalar = 0x0A
                    case UInt8(ascii: "r"): scalar = 0x0D
                    case UInt8(ascii: "t"): scalar = 0x09
                    case UInt8(ascii: "u"):
                        scalar = try hex4(escapeStart)
                        if scalar >= 0xD800 && scalar < 0xDC00 {
                            guard i + 1 < n, r[i] == 0x5C, r[i + 1] == UInt8(ascii: "u") else {
                                throw fail("a lone UTF-16 surrogate in a string", at: escapeStart)
                            }
                            i += 2
                            let low = try hex4(escapeStart)
                            guard low >= 0xDC00 && low < 0xE000 else { throw fail("a lone UTF-16 surrogate in a string", at: escapeStart) }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else if scalar >= 0xDC00 && scalar < 0xE000 {
                            throw fail("a lone UTF-16 surrogate in a string", at: escapeStart)
                        }
                    default:
                        throw fail("an unknown escape '\\\(Character(Unicode.Scalar(e)))' in a string", at: escapeStart)
                    }
                    for byte in Unicode.UTF8.encode(Unicode.Scalar(scalar)!)! {
                        out.storeBytes(of: byte, toByteOffset: k, as: UInt8.self)
                        k += 1
                    }
                    continue
                }
                out.storeBytes(of: b, toByteOffset: k, as: UInt8.self)
                k += 1
                i += 1
            }
            throw fail("a string is never closed")
        }
        func hex4(_ escapeStart: Int) throws(RowProblem) -> UInt32 {
            guard i + 4 <= n else { throw fail("a \\u escape needs four hex digits", at: escapeStart) }
            var v: UInt32 = 0
            for _ in 0..<4 {
                let c = r[i]
                let d: UInt32
                switch c {
                case 0x30...0x39: d = UInt32(c - 0x30)
                case 0x41...0x46: d = UInt32(c - 0x41 + 10)
                case 0x61...0x66: d = UInt32(c - 0x61 + 10)
                default: throw fail("a \\u escape needs four hex digits", at: escapeStart)
                }
                v = v << 4 | d
                i += 1
            }
            return v
        }

        skipSpace()
        if i < n, r[i] == UInt8(ascii: "[") { throw RowProblem(column: i + 1, problem: .jsonArray) }
        guard i < n, r[i] == UInt8(ascii: "{") else { throw fail("the line is not a JSON object") }
        i += 1
        skipSpace()
        if i < n && r[i] == UInt8(ascii: "}") {
            i += 1
        } else {
            while true {
                skipSpace()
                guard i < n, r[i] == 0x22 else { throw fail("expected a quoted key") }
                let keyColumn = i + 1
                let (kp, kn) = try string()
                let keyBytes = UnsafeRawBufferPointer(start: kp, count: kn)
                guard let column = TraceColumn(name: keyBytes) else {
                    throw RowProblem(column: keyColumn, problem: .unknownKey(String(decoding: keyBytes, as: UTF8.self)))
                }
                if fields.isPresent(column) {
                    throw RowProblem(column: keyColumn, problem: .duplicateKey(column.name))
                }
                skipSpace()
                guard i < n, r[i] == UInt8(ascii: ":") else { throw fail("expected ':' after a key") }
                i += 1
                skipSpace()
                guard i < n else { throw fail("the object ends early") }
                let valueColumn = i + 1
                let c = r[i]
                if c == 0x22 {
                    let (vp, vn) = try string()
                    // Point at the first byte inside the quotes, as CSV does for quoted fields.
                    fields.set(column, vp, vn, column: valueColumn + 1)
                } else if c == UInt8(ascii: "-") || (c >= 0x30 && c <= 0x39) {
                    let begin = i
                    while i < n, r[i] != UInt8(ascii: ","), r[i] != UInt8(ascii: "}"), r[i] != 0x20 { i += 1 }
                    fields.set(column, r.baseAddress! + begin, i - begin, column: valueColumn)
                } else if n - i >= 4 && RowDecoder.equals(UnsafeRawBufferPointer(rebasing: r[i..<(i + 4)]), "null") {
                    i += 4
                    fields.set(column, nil, 0, column: valueColumn)
                } else if c == UInt8(ascii: "{") || c == UInt8(ascii: "[") {
                    throw fail("the value of '\(column.name)' is an object or array")
                } else {
                    throw fail("the value of '\(column.name)' is not a string, number or null")
                }
                skipSpace()
                guard i < n else { throw fail("the object is never closed") }
                if r[i] == UInt8(ascii: ",") { i += 1; continue }
                if r[i] == UInt8(ascii: "}") { i += 1; break }
                throw fail("expected ',' or '}' after a value")
            }
        }
        skipSpace()
        guard i == n else { throw fail("text after the end of the object") }
        for c in TraceColumn.allCases where c.isRequired && !fields.isPresent(c) {
            // A `state` row has no app: its "app" key may be left out (or be "" or null).
            if c == .app, fields.isPresent(.event), RowDecoder.equals(fields.bytes(.event), "state") { continue }
            throw RowProblem(column: 1, problem: .missingKey(c.name))
        }
    }
}
