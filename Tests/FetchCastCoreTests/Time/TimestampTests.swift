import Testing
@testable import FetchCastCore
import FetchCastTestSupport

/// Parses a timestamp given as text.
private func parse(_ text: String, defaultOffset: Int32 = 0) throws(Timestamp.Failure) -> Timestamp.Parsed {
    let result: Result<Timestamp.Parsed, Timestamp.Failure> = Array(text.utf8).withUnsafeBytes { raw in
        Result { () throws(Timestamp.Failure) in try Timestamp.parse(raw, defaultOffset: defaultOffset) }
    }
    return try result.get()
}

struct TimestampTests {
    // 2013-11-09T22:36:45Z is 1_384_036_605 Unix seconds (`date -u -d @1384036605`).
    static let instant: Int64 = 1_384_036_605_000_000

    @Test(arguments: [
        ("2013-11-09T22:36:45Z", instant, Int32(0)),
        ("2013-11-09T22:36:45z", instant, 0),
        ("2013-11-09T23:36:45+01:00", instant, 3600),
        ("2013-11-09T23:36:45+0100", instant, 3600),
        ("2013-11-09T23:36:45+01", instant, 3600),
        ("2013-11-09T17:06:45-0530", instant, -19_800),
        ("2013-11-09T17:06:45-05:30", instant, -19_800),
        ("2013-11-10T16:36:45+18:00", instant, 64_800),
        ("2013-11-09 22:36:45Z", instant, 0),
        ("2013-11-09T22:36:45.5Z", instant + 500_000, 0),
        ("2013-11-09T22:36:45,25Z", instant + 250_000, 0),
        ("2013-11-09T22:36:45.000001Z", instant + 1, 0),
        ("2013-11-09T23:36:45.123456+01:00", instant + 123_456, 3600),
        ("1970-01-01T00:00:00Z", 0, 0),
        ("1970-01-01T00:30:00+01:00", -1_800_000_000, 3600),
        ("2000-02-29T12:00:00Z", 951_825_600_000_000, 0),
        ("9999-12-31T23:59:59Z", 253_402_300_799_000_000, 0),
    ])
    func parsesISO8601(text: String, micros: Int64, offset: Int32) throws {
        let parsed = try parse(text)
        #expect(parsed == Timestamp.Parsed(micros: micros, utcOffsetSeconds: offset))
    }

    @Test(arguments: [
        ("1384036605", Int32(0), instant),
        ("1384036605", 3600, instant),
        ("1384036605", -19_800, instant),
        ("0", 0, 0),
        ("253402300799", 0, 253_402_300_799_000_000),
    ])
    func parsesUnixSecondsWithTheDefaultOffset(text: String, defaultOffset: Int32, micros: Int64) throws {
        let parsed = try parse(text, defaultOffset: defaultOffset)
        #expect(parsed.micros == micros)
        #expect(parsed.utcOffsetSeconds == defaultOffset)
    }

    @Test(arguments: [
        // (text, byte offset of the fault, a word the problem must mention)
        ("", 0, "empty"),
        ("2013-02-30T00:00:00Z", 8, "day 30"),
        ("2013-02-29T00:00:00Z", 8, "day 29"),
        ("2013-04-31T00:00:00Z", 8, "day 31"),
        ("2013-13-01T00:00:00Z", 5, "month 13"),
        ("2013-00-01T00:00:00Z", 5, "month 0"),
        ("2013-11-09T24:00:00Z", 11, "hour 24"),
        ("2013-11-09T23:60:00Z", 14, "minute 60"),
        ("2013-11-09T23:59:60Z", 17, "second 60"),
        ("2013-11-09T22:36:45", 19, "no UTC offset"),
        ("2013-11-09T22:36:45.123", 23, "no UTC offset"),
        ("2013-11-09T22:36:45.1234567Z", 26, "more than 6"),
        ("2013-11-09T22:36:45.Z", 20, "digits after the decimal point"),
        ("2013-11-09T22:36:45+19:00", 19, "out of range"),
        ("2013-11-09T22:36:45+01:60", 19, "out of range"),
        ("2013-11-09T22:36:45+18:30", 19, "out of range"),
        ("2013-11-09T22:36:45+1", 21, "offset hours"),
        ("2013-11-09T22:36:45+01:0", 24, "offset minutes"),
        ("2013-11-09T22:36:45Zx", 20, "after the UTC offset"),
        ("2013-11-09X22:36:45Z", 10, "'T'"),
        ("2013-11-09T22-36:45Z", 13, "':'"),
        ("2013-1a-09T22:36:45Z", 6, "month"),
        ("1969-12-31T23:59:59Z", 0, "before 1970"),
        ("1969-12-31T18:59:59-05:00", 0, "before 1970"),
        ("1968-12-31T23:59:59-05:00", 0, "before 1970"),
        ("1384036605.5", 10, "not a timestamp"),
        ("-1384036605", 0, "not a timestamp"),
        ("253402300800", 0, "out of range"),
        ("1234567890123", 0, "out of range"),
        ("yesterday", 0, "not a timestamp"),
    ])
    func rejectsInvalidTimes(text: String, offset: Int, mentions: String) {
        let failure = #expect(throws: Timestamp.Failure.self) { try parse(text) }
        #expect(failure?.offset == offset)
        #expect(failure?.problem.contains(mentions) == true, "\(failure?.problem ?? "")")
        #expect(failure?.expected.isEmpty == false)
    }

    @Test(arguments: [
        "2013-11-09T23:36:45+01:00",
        "2013-11-09T22:36:45Z",
        "2013-11-09T17:06:45-05:30",
        "2013-11-09T22:36:45.5Z",
        "2013-11-09T22:36:45.000001+14:00",
        "1970-01-01T00:30:00+01:00",
        "1970-01-01T00:00:00Z",
        // Just after 1970 (UTC) west of Greenwich: a local 1969 date, as `export` writes it.
        "1969-12-31T19:00:05-05:00",
        "2000-02-29T23:59:59.999999-12:00",
        "9999-12-31T23:59:59Z",
    ])
    func formatsWhatItParses(text: String) throws {
        let parsed = try parse(text)
        #expect(Timestamp.format(micros: parsed.micros, utcOffsetSeconds: parsed.utcOffsetSeconds) == text)
    }

    @Test func formatsTheSameInstantInEveryOffset() {
        #expect(Timestamp.format(micros: Self.instant, utcOffsetSeconds: 0) == "2013-11-09T22:36:45Z")
        #expect(Timestamp.format(micros: Self.instant, utcOffsetSeconds: 3600) == "2013-11-09T23:36:45+01:00")
        #expect(Timestamp.format(micros: Self.instant, utcOffsetSeconds: 5 * 3600) == "2013-11-10T03:36:45+05:00")
        #expect(Timestamp.format(micros: -1, utcOffsetSeconds: 0) == "1969-12-31T23:59:59.999999Z")
    }

    @Test func roundTripsManyInstantsAndOffsets() throws {
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<2_000 {
            let micros = Int64.random(in: 0...253_402_200_000_000_000, using: &generator)
            let offset = Int32.random(in: -72...72, using: &generator) * 900
            let text = Timestamp.format(micros: micros, utcOffsetSeconds: offset)
            let parsed = try parse(text)
            #expect(parsed == Timestamp.Parsed(micros: micros, utcOffsetSeconds: offset), "\(text)")
        }
    }

    @Test func roundTripsTheFirstHoursOf1970InEveryOffset() throws {
        // Found by fuzzing: west of Greenwich these instants are local 1969 dates.
        for micros: Int64 in [0, 1, 999_999, 5_000_000, 3_599_000_000, 64_799_999_999] {
            for offset in stride(from: Int32(-18 * 3600), through: 18 * 3600, by: 900) {
                let text = Timestamp.format(micros: micros, utcOffsetSeconds: offset)
                #expect(try parse(text) == Timestamp.Parsed(micros: micros, utcOffsetSeconds: offset), "\(text)")
            }
        }
    }

    @Test(arguments: [
        ("Z", Int32?.some(0)), ("z", 0), ("0", 0),
        ("+01:00", 3600), ("+0100", 3600), ("+01", 3600),
        ("-05:30", -19_800), ("-0530", -19_800), ("+14:00", 50_400), ("-18:00", -64_800),
        ("+1", nil), ("01:00", nil), ("+19:00", nil), ("+18:30", nil), ("+01:60", nil), ("+01:0", nil),
        ("+0:100", nil), ("+01::00", nil), ("+010:0", nil), ("+ab:cd", nil), ("", nil),
    ])
    func parsesOffsetArguments(text: String, seconds: Int32?) {
        #expect(Timestamp.parseOffset(text) == seconds)
    }

    @Test(arguments: [Int32(0), 3600, -19_800, 50_400, -43_200, 1_800])
    func formatsOffsetsThatParseBack(seconds: Int32) {
        let text = Timestamp.formatOffset(seconds)
        #expect(Timestamp.parseOffset(text) == seconds)
    }

    @Test(arguments: [
        ("2013-11-09", Double?.some(1_383_955_200)),
        ("2013-11-09T22:36:45", 1_384_036_605),
        ("2013-11-09T23:36:45+01:00", 1_384_036_605),
        ("2013-11-09T22:36:45.5Z", 1_384_036_605.5),
        ("1384036605", 1_384_036_605),
        // Fractional Unix seconds, as at_unix and the service's paging links write them.
        ("1795853418.9831796", 1_795_853_418.98318),
        ("1384036605.5", 1_384_036_605.5),
        ("0.000001", 0.000001),
        ("1384036605.", nil),
        (".5", nil),
        ("1.2.3", nil),
        ("-5.5", nil),
        ("253402300800.0", nil),
        ("2013-02-30", nil),
        ("soon", nil),
    ])
    func parsesCommandLineTimes(text: String, seconds: Double?) {
        #expect(Timestamp.parseArgument(text) == seconds)
    }
}

