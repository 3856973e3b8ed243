/// Parsing and formatting of trace timestamps: ISO 8601 with a UTC offset, or Unix seconds.
///
/// A hand-written parser: Foundation's `ISO8601DateFormatter` manages about 36 thousand
/// timestamps a second here, this one millions. Accepted forms:
///
/// - `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM|±HHMM|±HH)`; a space may stand for `T`;
///   the fraction has 1 to 6 digits (microseconds are the store's resolution).
/// - Integer Unix seconds (digits only), in UTC unless a default offset is given.
public enum Timestamp {
    /// A parsed instant with the offset it was written in.
    public struct Parsed: Sendable, Hashable {
        /// Microseconds since the Unix epoch, UTC.
        public var micros: Int64
        /// The offset from UTC in seconds.
        public var utcOffsetSeconds: Int32
    }

    /// Why a timestamp did not parse: the byte offset in the field and what was expected.
    public struct Failure: Error, Sendable, Hashable {
        /// 0-based byte offset inside the field where the problem is.
        public var offset: Int
        /// A phrase describing the problem.
        public var problem: String
        /// A phrase describing what was expected.
        public var expected: String
    }

    /// How a valid timestamp looks, for error messages.
    public static let expectedForm = "ISO 8601 with a UTC offset such as 2013-11-09T23:36:45+01:00 or Z, or integer Unix seconds"

    /// Parses a timestamp field.
    ///
    /// - Parameters:
    ///   - bytes: The field's UTF-8 bytes, unquoted.
    ///   - defaultOffset: The offset assumed for Unix seconds.
    /// - Returns: The instant and its offset.
    /// - Throws: ``Failure`` naming the byte at fault.
    @inline(__always)
    public static func parse(_ bytes: UnsafeRawBufferPointer, defaultOffset: Int32 = 0) throws(Failure) -> Parsed {
        let n = bytes.count
        if n == 0 { throw Failure(offset: 0, problem: "the time is empty", expected: expectedForm) }
        if n >= 11 && bytes[4] == UInt8(ascii: "-") {
            return try parseISO(bytes)
        }
        // Integer Unix seconds.
        var value: Int64 = 0
        for i in 0..<n {
            let d = bytes[i] &- 48
            guard d < 10 else {
                throw Failure(offset: i, problem: "'\(text(bytes))' is not a timestamp", expected: expectedForm)
            }
            guard i < 12 else {
                throw Failure(offset: 0, problem: "Unix time \(text(bytes)) is out of range", expected: "seconds between 1970 and 9999")
            }
            value = value * 10 + Int64(d)
        }
        guard value <= 253_402_300_799 else {
            throw Failure(offset: 0, problem: "Unix time \(value) is out of range", expected: "seconds between 1970 and 9999")
        }
        return Parsed(micros: value * 1_000_000, utcOffsetSeconds: defaultOffset)
    }

    @inline(__always)
    private static func digits(_ b: UnsafeRawBufferPointer, _ at: Int, _ count: Int, _ what: String) throws(Failure) -> Int {
        var v = 0
        for i in at..<(at + count) {
            guard i < b.count else {
                throw Failure(offset: i, problem: "the time ends early in the \(what)", expected: expectedForm)
            }
            let d = b[i] &- 48
            guard d < 10 else {
                throw Failure(offset: i, problem: "expected a digit of the \(what) in '\(text(b))'", expected: expectedForm)
            }
            v = v * 10 + Int(d)
        }
        return v
    }

    @inline(__always)
    private static func expect(_ b: UnsafeRawBufferPointer, _ at: Int, _ c: UInt8, _ what: String) throws(Failure) {
        guard at < b.count, b[at] == c else {
            throw Failure(offset: at, problem: "expected '\(Character(Unicode.Scalar(c)))' \(what) in '\(text(b))'", expected: expectedForm)
        }
    }

    private static func parseISO(_ b: UnsafeRawBufferPointer) throws(Failure) -> Parsed {
        let year = try digits(b, 0, 4, "year")
        try expect(b, 4, UInt8(ascii: "-"), "after the year")
        let month = try digits(b, 5, 2, "month")
        try expect(b, 7, UInt8(ascii: "-"), "after the month")
        let day = try digits(b, 8, 2, "day")
        guard 10 < b.count, b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: " ") || b[10] == UInt8(ascii: "t") else {
            throw Failure(offset: 10, problem: "expected 'T' between date and time in '\(text(b))'", expected: expectedForm)
        }
        let hour = try digits(b, 11, 2, "hour")
        try expect(b, 13, UInt8(ascii: ":"), "after the hour")
        let minute = try digits(b, 14, 2, "minute")
        try expect(b, 16, UInt8(ascii: ":"), "after the minute")
        let second = try digits(b, 17, 2, "second")
        // A local year from 1970, or a local 1969 date whose instant is 1970 or later in UTC
        // (just after midnight UTC on 1970-01-01 west of Greenwich), as `export` writes it.
        guard year >= 1969 else { throw Failure(offset: 0, problem: "year \(year) is before 1970", expected: "a year from 1970 to 9999") }
        guard (1...12).contains(month) else { throw Failure(offset: 5, problem: "month \(month) does not exist", expected: "a month 01–12") }
        guard day >= 1 && day <= CivilDate.daysInMonth(year: year, month: month) else {
            throw Failure(offset: 8, problem: "day \(day) does not exist in \(year)-\(month < 10 ? "0" : "")\(month)", expected: "a day of that month")
        }
        guard hour < 24 else { throw Failure(offset: 11, problem: "hour \(hour) does not exist", expected: "an hour 00–23") }
        guard minute < 60 else { throw Failure(offset: 14, problem: "minute \(minute) does not exist", expected: "a minute 00–59") }
        guard second < 60 else { throw Failure(offset: 17, problem: "second \(second) does not exist", expected: "a second 00–59") }
        var i = 19
        var micros: Int64 = 0
        if i < b.count && (b[i] == UInt8(ascii: ".") || b[i] == UInt8(ascii: ",")) {
            i += 1
            var digitsSeen = 0
            var scale: Int64 = 100_000
            while i < b.count, b[i] &- 48 < 10 {
                guard digitsSeen < 6 else {
                    throw Failure(offset: i, problem: "more than 6 fractional digits", expected: "at most microsecond precision (6 digits)")
                }
                micros += Int64(b[i] &- 48) * scale
                scale /= 10
                digitsSeen += 1
                i += 1
            }
            guard digitsSeen > 0 else {
                throw Failure(offset: i, problem: "expected digits after the decimal point in '\(text(b))'", expected: expectedForm)
            }
        }
        guard i < b.count else {
            throw Failure(offset: i, problem: "'\(text(b))' has no UTC offset", expected: "an offset such as Z or +01:00 after the time")
        }
        let offset: Int
        let sign = b[i]
        if sign == UInt8(ascii: "Z") || sign == UInt8(ascii: "z") {
            offset = 0
            i += 1
        } else if sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            let oh = try digits(b, i + 1, 2, "offset hours")
            var om = 0
            var next = i + 3
            if next < b.count && b[next] == UInt8(ascii: ":") {
                om = try digits(b, next + 1, 2, "offset minutes")
                next += 3
            } else if next < b.count {
                om = try digits(b, next, 2, "offset minutes")
                next += 2
            }
            guard om < 60 && oh * 60 + om <= 18 * 60 else {
                throw Failure(offset: i, problem: "UTC offset in '\(text(b))' is out of range", expected: "an offset between -18:00 and +18:00")
            }
            offset = (sign == UInt8(ascii: "-") ? -1 : 1) * (oh * 3600 + om * 60)
            i = next
        } else {
            throw Failure(offset: i, problem: "'\(text(b))' has no UTC offset", expected: "an offset such as Z or +01:00 after the time")
        }
        guard i == b.count else {
            throw Failure(offset: i, problem: "unexpected text after the UTC offset in '\(text(b))'", expected: expectedForm)
        }
        let days = CivilDate.days(year: year, month: month, day: day)
        let localSeconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second)
        let instant = (localSeconds - Int64(offset)) * 1_000_000 + micros
        guard year >= 1970 || instant >= 0 else {
            throw Failure(offset: 0, problem: "year \(year) is before 1970", expected: "a year from 1970 to 9999")
        }
        return Parsed(micros: instant, utcOffsetSeconds: Int32(offset))
    }

    /// Parses a UTC offset written as `Z`, `±HH`, `±HHMM` or `±HH:MM` (for `--utc-offset`).
    public static func parseOffset(_ text: String) -> Int32? {
        if text == "Z" || text == "z" || text == "0" { return 0 }
        let u = Array(text.utf8)
        guard u.count >= 3, u[0] == UInt8(ascii: "+") || u[0] == UInt8(ascii: "-") else { return nil }
        // Exactly ±HH, ±HHMM or ±HH:MM: a colon only between hours and minutes.
        var rest = Array(u.dropFirst())
        if rest.count == 5 {
            guard rest[2] == UInt8(ascii: ":") else { return nil }
            rest.remove(at: 2)
        }
        guard rest.count == 2 || rest.count == 4, rest.allSatisfy({ $0 &- 48 < 10 }) else { return nil }
        let d = rest.map { Int($0 - 48) }
        let h = d[0] * 10 + d[1]
        let m = rest.count == 4 ? d[2] * 10 + d[3] : 0
        guard m < 60, h * 60 + m <= 18 * 60 else { return nil }
        return Int32((u[0] == UInt8(ascii: "-") ? -1 : 1) * (h * 3600 + m * 60))
    }

    /// Formats an instant as ISO 8601 in the given offset, e.g. `2013-11-09T23:36:45+01:00`;
    /// fractional seconds are written only when non-zero.
    public static func format(micros: Int64, utcOffsetSeconds: Int32) -> String {
        let local = micros + Int64(utcOffsetSeconds) * 1_000_000
        let (secs, frac) = local.quotientAndRemainder(dividingBy: 1_000_000)
        let s = frac < 0 ? secs - 1 : secs
        let f = frac < 0 ? frac + 1_000_000 : frac
        let (dayCount, sod) = s.quotientAndRemainder(dividingBy: 86_400)
        let day = sod < 0 ? dayCount - 1 : dayCount
        let secondOfDay = sod < 0 ? sod + 86_400 : sod
        let (y, m, d) = CivilDate.date(days: Int(day))
        var out = "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(Int(secondOfDay / 3600), 2)):\(pad(Int(secondOfDay % 3600 / 60), 2)):\(pad(Int(secondOfDay % 60), 2))"
        if f != 0 {
            var digits = pad(Int(f), 6)
            while digits.hasSuffix("0") { digits.removeLast() }
            out += "." + digits
        }
        out += formatOffset(utcOffsetSeconds)
        return out
    }

    /// Formats an offset as `Z` or `±HH:MM`.
    public static func formatOffset(_ seconds: Int32) -> String {
        if seconds == 0 { return "Z" }
        let a = abs(Int(seconds))
        return (seconds < 0 ? "-" : "+") + pad(a / 3600, 2) + ":" + pad(a % 3600 / 60, 2)
    }

    /// Parses a command-line time: ISO 8601 (offset optional, then UTC), a date `YYYY-MM-DD`
    /// (midnight UTC) or Unix seconds, whole or with a fraction (`1795853418.9831796`, as the
    /// service's `at_unix` and paging links write them; rounded to the microsecond). Returns
    /// Unix seconds.
    public static func parseArgument(_ text: String) -> Double? {
        if let seconds = fractionalUnixSeconds(text) { return seconds }
        var candidates = [text]
        if text.count == 10 { candidates.append(text + "T00:00:00Z") }
        if text.count == 19 || (text.count > 19 && !text.contains("Z") && !text.dropFirst(19).contains("+") && !text.dropFirst(19).contains("-")) {
            candidates.append(text + "Z")
        }
        for c in candidates {
            var c = c
            if let p = c.withUTF8({ try? parse(UnsafeRawBufferPointer($0)) }) {
                return Double(p.micros) / 1_000_000
            }
        }
        return nil
    }

    /// `DIGITS.DIGITS` (1–12 digits before the point, 1–9 after) within 1970–9999, rounded to
    /// the microsecond; `nil` for anything else.
    static func fractionalUnixSeconds(_ text: String) -> Double? {
        let parts = text.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 2, (1...12).contains(parts[0].count), (1...9).contains(parts[1].count),
              parts.allSatisfy({ $0.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } }),
              let whole = Int64(parts[0]), whole <= 253_402_300_799
        else { return nil }
        let fraction = String(parts[1]) + String(repeating: "0", count: 9 - parts[1].count)
        guard let nanos = Int64(fraction) else { return nil }
        let micros = min(whole * 1_000_000 + (nanos + 500) / 1_000, 253_402_300_799_999_999)
        return Double(micros) / 1_000_000
    }

    @inline(__always)
    private static func pad(_ v: Int, _ width: Int) -> String {
        let s = String(v)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }

    static func text(_ b: UnsafeRawBufferPointer) -> String {
        String(decoding: b.prefix(64), as: UTF8.self)
    }
}
