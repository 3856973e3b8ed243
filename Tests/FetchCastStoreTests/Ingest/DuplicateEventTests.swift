import Foundation
import Testing
@testable import FetchCastStore
import FetchCastTestSupport
import FetchCastTrace

/// Events the store already holds are skipped on ingest (issue 27, items 10 and 11).
struct DuplicateEventTests {
    /// Every kind of row: a launch with a duration, fetches with bytes, a publish to every
    /// device, a `state` row, and a launch repeated in the file.
    static let rows = [
        "2013-11-09T23:36:45+01:00,dev-1,com.example.news,launch,,,1500,,,,",
        "2013-11-09T22:40:00Z,dev-1,com.example.news,fetch,newData,2048,310,,,,",
        "2013-11-09T22:41:00.25Z,dev-2,com.example.mail,fetch,failed,,,,,,",
        "2013-11-09T22:45:00Z,,com.example.news,publish,,,,,,,",
        "2013-11-09T22:50:00Z,dev-2,,state,,,,wifi,charging,80,off",
        "2013-11-10T08:00:00Z,dev-2,com.example.mail,launch,,,,,,,",
        "2013-11-10T08:00:00Z,dev-2,com.example.mail,launch,,,,,,,",
    ]
    static let wide = "time,device,app,event,result,bytes,duration_ms,network,power,battery,low_power\n"

    static func trace(_ rows: [String]) -> String { wide + rows.map { $0 + "\n" }.joined() }

    func ingest(_ store: Store, _ path: String, keepingDuplicates: Bool = false) throws -> FileIngestResult {
        var options = IngestOptions(now: fixedNow)
        options.keepsDuplicates = keepingDuplicates
        return try Ingestor(store: store, options: options).ingest(path: path)
    }

    /// The store without its `files` table (a file record is kept for a fully duplicate file).
    func events(_ store: Store) throws -> [String: [String]] {
        try store.dump().filter { $0.key != "files" }
    }

    @Test func theSameEventsInAnotherOrderAddNothing() throws {
        let temp = try TemporaryStore()
        let original = try temp.write("a.csv", Self.trace(Self.rows))
        let sorted = try temp.write("sorted.csv", Self.trace(Self.rows.reversed()))
        let store = try temp.open()
        #expect(try ingest(store, original).events == 7)
        let before = try events(store)
        let again = try ingest(store, sorted)
        #expect(again.status == .ingested)
        #expect(again.events == 0)
        #expect(again.duplicates == 7)
        #expect(try events(store) == before)
        #expect(try store.connection.scalarInt("SELECT count(*) FROM event_log") == 7)
        // The file is recorded (with no rows), so its bytes again are known at once.
        #expect(try store.files().map(\.rows) == [7, 0])
        #expect(try ingest(store, sorted).status == .alreadyIngested)
    }

    @Test func aGzippedCopyAddsNothing() throws {
        let temp = try TemporaryStore()
        let plain = try temp.write("a.csv", Self.trace(Self.rows))
        let gzipped = try temp.write("a.csv.gz", bytes: TemporaryDirectory.gzip(Array(Self.trace(Self.rows).utf8)))
        let store = try temp.open()
        #expect(try ingest(store, plain).events == 7)
        let before = try events(store)
        let copy = try ingest(store, gzipped)
        #expect(copy.gzip)
        #expect(copy.status == .ingested)
        #expect((copy.events, copy.duplicates) == (0, 7))
        #expect(try events(store) == before)
    }

    @Test func anOverlappingFileAddsOnlyItsNewEvents() throws {
        let temp = try TemporaryStore()
        let first = try temp.write("first.csv", Self.trace(Array(Self.rows.prefix(4))))
        // Rows 3-7 of the trace, the first row written with another UTC offset (the same
        // instant: a duplicate), and rows that differ from a stored one in one column each: the
        // bytes, the result, the device, the instant by a microsecond.
        let overlapping = try temp.write("second.csv", Self.trace(Array(Self.rows.dropFirst(2)) + [
            "2013-11-10T00:36:45+02:00,dev-1,com.example.news,launch,,,1500,,,,",
            "2013-11-09T22:40:00Z,dev-1,com.example.news,fetch,newData,2049,310,,,,",
            "2013-11-09T22:40:00Z,dev-1,com.example.news,fetch,noData,2048,310,,,,",
            "2013-11-09T22:40:00Z,dev-2,com.example.news,fetch,newData,2048,310,,,,",
            "2013-11-09T22:40:00.000001Z,dev-1,com.example.news,fetch,newData,2048,310,,,,",
        ]))
        let store = try temp.open()
        #expect(try ingest(store, first).events == 4)
        let second = try ingest(store, overlapping)
        #expect((second.events, second.duplicates) == (7, 3))
        #expect(try store.connection.scalarInt("SELECT count(*) FROM event_log") == 11)
        // The per-file counts are of the events added.
        #expect(try store.connection.scalarInt("SELECT sum(n) FROM file_counts WHERE file_id = 2") == 7)
        #expect(try store.connection.scalarInt("SELECT count(*) FROM events WHERE event = 'publish'") == 1)
    }

    /// A trace re-exported in UTC is the same events: nothing added, and the stored events keep
    /// the offset they were first written with (their local day and hour).
    @Test func aTraceWrittenWithAnotherOffsetAddsNothing() throws {
        let temp = try TemporaryStore()
        let local = try temp.write("local.csv", Self.trace([
            "2024-01-01T10:00:00+01:00,dev-1,com.example.news,launch,,,,,,,",
            "2024-01-01T23:30:00-05:00,dev-1,com.example.mail,launch,,,,,,,",
        ]))
        let utc = try temp.write("utc.csv", Self.trace([
            "2024-01-01T09:00:00Z,dev-1,com.example.news,launch,,,,,,,",
            "2024-01-02T04:30:00Z,dev-1,com.example.mail,launch,,,,,,,",
        ]))
        let store = try temp.open()
        #expect(try ingest(store, local).events == 2)
        let again = try ingest(store, utc)
        #expect((again.events, again.duplicates) == (0, 2))
        #expect(try store.connection.scalarInt("SELECT count(*) FROM event_log") == 2)
        #expect(try store.connection.scalarInt("SELECT count(*) FROM event_log WHERE utc_offset_s IN (3600, -18000)") == 2)
    }

    @Test func aStateRowWithAnotherConditionIsNew() throws {
        let temp = try TemporaryStore()
        let first = try temp.write("first.csv", Self.trace([Self.rows[4]]))
        let second = try temp.write("second.csv", Self.trace([
            Self.rows[4], "2013-11-09T22:50:00Z,dev-2,,state,,,,wifi,charging,81,off",
            "2013-11-09T22:50:00Z,dev-2,,state,,,,wifi,charging,80,",
        ]))
        let store = try temp.open()
        _ = try ingest(store, first)
        let result = try ingest(store, second)
        #expect((result.events, result.duplicates) == (2, 1))
    }

    @Test func eachStoredEventStandsForOneRow() throws {
        let temp = try TemporaryStore()
        let once = try temp.write("once.csv", Self.trace([Self.rows[0]]))
        let thrice = try temp.write("thrice.csv", Self.trace([Self.rows[0], Self.rows[1], Self.rows[0], Self.rows[0]]))
        let store = try temp.open()
        _ = try ingest(store, once)
        let result = try ingest(store, thrice)
        // One of the three launches was stored: two are added, as is the fetch.
        #expect((result.events, result.duplicates) == (3, 1))
        #expect(try store.connection.scalarInt("SELECT count(*) FROM events WHERE event = 'launch'") == 3)
    }

    @Test func keepingDuplicatesAddsThemAgain() throws {
        let temp = try TemporaryStore()
        let original = try temp.write("a.csv", Self.trace(Self.rows))
        let sorted = try temp.write("sorted.csv", Self.trace(Self.rows.reversed()))
        let store = try temp.open()
        _ = try ingest(store, original)
        let again = try ingest(store, sorted, keepingDuplicates: true)
        #expect((again.events, again.duplicates) == (7, 0))
        #expect(try store.connection.scalarInt("SELECT count(*) FROM event_log") == 14)
    }

    /// Many batches, in another order, and a file scattered over a long history (each batch's
    /// range holds far more stored events than its rows: looked up instant by instant).
    @Test(arguments: [false, true])
    func aLargeFileReadAgainAddsNothing(scattered: Bool) throws {
        let temp = try TemporaryStore()
        let lines = (0..<40_000).map { "\(1_384_036_605 + $0),dev-\($0 % 3),com.a\($0 % 7),launch,,,\($0 % 11)" }
        let header = "time,device,app,event,result,bytes,duration_ms\n"
        let original = try temp.write("a.csv", header + lines.joined(separator: "\n") + "\n")
        // Scattered: every 5,000th row, first and last included, plus one new row per device.
        let again = scattered
            ? stride(from: 0, to: 40_000, by: 5_000).map { lines[$0] } + [lines[39_999]]
                + (0..<3).map { "\(1_384_036_605 + $0),dev-\($0),com.new,launch,,," }
            : Array(lines.reversed())
        let second = try temp.write("again.csv", header + again.joined(separator: "\n") + "\n")
        let store = try temp.open()
        #expect(try ingest(store, original).events == 40_000)
        let result = try ingest(store, second)
        #expect(result.duplicates == (scattered ? 9 : 40_000))
        #expect(result.events == (scattered ? 3 : 0))
        #expect(try store.connection.scalarInt("SELECT count(*) FROM event_log") == 40_000 + result.events)
    }

    @Test func aFirstIngestReadsNoStoredEvents() throws {
        let temp = try TemporaryStore()
        let store = try temp.open()
        #expect(DuplicateFilter(connection: store.connection, lastIDBefore: 0) == nil)
        let path = try temp.write("a.csv", Self.trace(Self.rows))
        #expect(try ingest(store, path).duplicates == 0)
    }
}
