import Foundation
import Testing
@testable import FetchCastStore
import FetchCastTrace
import FetchCastTestSupport

struct IngestorTests {
    @Test func keepsEveryValidRowIncludingDuplicates() throws {
        let temp = try TemporaryStore()
        let row = "2013-11-09T22:36:45Z,,com.example.news,publish,,,\n"
        let path = try temp.write("dupes.csv", header + row + row + row + """
            2013-11-09T22:36:45Z,dev-1,com.example.news,launch,,,
            2013-11-09T22:36:45Z,dev-1,com.example.news,launch,,,

            """)
        let store = try temp.open()
        let result = try store.ingest(path)
        #expect(result.status == .ingested)
        #expect(result.events == 5)
        #expect(try store.connection.scalarInt("SELECT count(*) FROM events") == 5)
        #expect(try store.eventRows() == [
            "1384036605|0|''|com.example.news|publish|NULL|NULL|NULL",
            "1384036605|0|''|com.example.news|publish|NULL|NULL|NULL",
            "1384036605|0|''|com.example.news|publish|NULL|NULL|NULL",
            "1384036605|0|'dev-1'|com.example.news|launch|NULL|NULL|NULL",
            "1384036605|0|'dev-1'|com.example.news|launch|NULL|NULL|NULL",
        ])
    }

    @Test func fillsTheEventsView() throws {
        let temp = try TemporaryStore()
        let path = try temp.write("all.csv", header + """
            2013-11-09T23:36:45+01:00,dev-1,com.example.news,launch,,,1500
            2013-11-09T17:06:46.75-05:30,dev-2,com.example.news,fetch,newData,2048,310
            2013-11-09T22:36:47Z,dev-2,com.example.mail,fetch,noData,,
            2013-11-09T22:36:48Z,dev-1,com.example.mail,fetch,failed,0,0
            2013-11-09T22:36:49Z,,com.example.news,publish,,,
            1970-01-01T00:59:59.5+01:00,dev-1,com.example.old,launch,,,

            """)
        let store = try temp.open()
        try store.ingest(path)
        #expect(try store.eventRows() == [
            "-1|3600|'dev-1'|com.example.old|launch|NULL|NULL|NULL",
            "1384036605|3600|'dev-1'|com.example.news|launch|NULL|NULL|1500",
            "1384036606|-19800|'dev-2'|com.example.news|fetch|'newData'|2048|310",
            "1384036607|0|'dev-2'|com.example.mail|fetch|'noData'|NULL|NULL",
            "1384036608|0|'dev-1'|com.example.mail|fetch|'failed'|0|0",
            "1384036609|0|''|com.example.news|publish|NULL|NULL|NULL",
        ])
        let columns = try store.rows("SELECT name FROM pragma_table_info('events') ORDER BY cid")
        #expect(Array(columns.prefix(8)) == ["time_utc", "utc_offset_s", "device", "app", "event", "result", "bytes", "duration_ms"])
        #expect(try store.rows("SELECT DISTINCT typeof(time_utc) || typeof(utc_offset_s) FROM events") == ["integerinteger"])
    }

    @Test func readsJSONLinesIntoTheSameRows() throws {
        let temp = try TemporaryStore()
        let csv = try temp.write("a.csv", header + "2013-11-09T22:36:46Z,dev-2,app,fetch,newData,2048,310\n")
        let jsonl = try temp.write("a.jsonl", #"{"time":"2013-11-09T22:36:46Z","device":"dev-2","app":"app","event":"fetch","result":"newData","bytes":2048,"duration_ms":310}"# + "\n")
        let first = try TemporaryStore(), second = try TemporaryStore()
        let a = try first.open(), b = try second.open()
        try a.ingest(csv)
        let result = try b.ingest(jsonl)
        #expect(result.format == "jsonl")
        #expect(try a.eventRows() == b.eventRows())
    }

    @Test func addsNothingForContentItAlreadyHolds() throws {
        let temp = try TemporaryStore()
        let text = header + "2013-11-09T22:36:45Z,dev-1,app,launch,,,\n"
        let path = try temp.write("a.csv", text)
        let copy = try temp.write("copy-of-a.csv", text)
        let store = try temp.open()
        let first = try store.ingest(path)
        let before = try store.dump()
        let again = try store.ingest(path)
        let renamed = try store.ingest(copy)
        #expect(first.status == .ingested)
        #expect(again.status == .alreadyIngested)
        #expect(again.events == 0)
        #expect(renamed.status == .alreadyIngested)
        #expect(renamed.sha256 == first.sha256)
        #expect(try store.dump() == before)
        #expect(try store.files().map(\.name) == [path])
    }

    @Test func recordsEachFile() throws {
        let temp = try TemporaryStore()
        let text = header + "2013-11-09T22:36:45Z,dev-1,app,launch,,,\n2013-11-09T22:36:46Z,,app,publish,,,\n"
        let path = try temp.write("a.csv", text)
        let store = try temp.open()
        let result = try store.ingest(path)
        let files = try store.files()
        #expect(files.count == 1)
        let file = try #require(files.first)
        #expect(file.name == path)
        #expect(file.sha256 == SHA256.hex(of: Array(text.utf8)))
        #expect(result.sha256 == file.sha256)
        #expect(file.format == "csv")
        #expect(!file.gzip)
        #expect(file.sizeBytes == Int64(text.utf8.count))
        #expect(file.rows == 2)
        #expect(file.rejected == 0)
        #expect(file.ingestedAt == "2013-11-09T22:36:45Z")
    }

    @Test func leavesTheStoreAsItWasWhenARowIsInvalid() throws {
        let temp = try TemporaryStore()
        let good = try temp.write("good.csv", header + "2013-11-09T22:36:45Z,dev-1,com.a,launch,,,\n")
        // Enough valid rows before the bad one that several batches were inserted, with names
        // (devices, apps) the store has not seen.
        var text = header
        for i in 0..<20_000 { text += "\(1_384_036_605 + i),new-dev-\(i % 300),com.new.\(i % 7),launch,,,\n" }
        text += "2013-11-09T22:36:45Z,new-dev-1,com.new.1,fetch,,,\n"
        for i in 0..<100 { text += "\(1_384_036_605 + i),new-dev-x,com.new.x,launch,,,\n" }
        let bad = try temp.write("bad.csv", text)
        let store = try temp.open()
        try store.ingest(good)
        let before = try store.dump()
        let error = #expect(throws: TraceError.self) { try store.ingest(bad) }
        #expect(error?.line == 20_002)
        #expect(error?.column == 48)
        #expect(try store.dump() == before)
        #expect(try store.stats().events == 1)
        #expect(!store.connection.inTransaction)
        // The store is still usable, and a later file goes in.
        let later = try temp.write("later.csv", header + "2013-11-09T22:36:46Z,dev-2,com.a,launch,,,\n")
        #expect(try store.ingest(later).events == 1)
        #expect(try store.files().map(\.name) == [good, later])
    }

    @Test func leavesTheStoreAsItWasWhenAGzipIsTruncated() throws {
        let temp = try TemporaryStore()
        var text = header
        for i in 0..<30_000 { text += "\(1_384_036_605 + i),dev-\(i % 50),com.a,launch,,,\(i)\n" }
        let full = temp.directory + "/full.csv.gz"
        let sink = try GzipSink(path: full)
        sink.write(text)
        #expect(sink.finish())
        let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: full)))
        let cut = try temp.write("cut.csv.gz", bytes: Array(bytes.dropLast(bytes.count / 3)))
        let store = try temp.open()
        let before = try store.dump()
        let error = #expect(throws: TraceError.self) { try store.ingest(cut) }
        #expect(error.map { String(describing: $0.problem).hasPrefix("truncatedGzip(") } == true)
        #expect(try store.dump() == before)
    }

    @Test func skipsInvalidRowsWhenAskedAndCountsThem() throws {
        let temp = try TemporaryStore()
        let path = try temp.write("mixed.csv", header + """
            2013-11-09T22:36:45Z,dev-1,com.a,launch,,,
            2013-11-09T22:36:46Z,,com.a,launch,,,
            2013-11-09T22:36:47Z,dev-1,com.a,fetch,,,
            2013-11-09T22:36:48Z,dev-1,com.a,fetch,noData,,

            """)
        let store = try temp.open()
        var rejected: [String] = []
        let result = try store.ingest(path, skipInvalid: true, onReject: { error, text in
            rejected.append("\(error.line):\(error.column) \(text)")
        })
        #expect(result.status == .ingested)
        #expect(result.events == 2)
        #expect(result.rejected == 2)
        #expect(rejected == [
            "3:22 2013-11-09T22:36:46Z,,com.a,launch,,,",
            "4:40 2013-11-09T22:36:47Z,dev-1,com.a,fetch,,,",
        ])
        #expect(try store.files().map(\.rejected) == [2])
        let stats = try store.stats()
        #expect(stats.rejected == 2)
        #expect(stats.events == 2)
        #expect(try store.connection.scalarInt("SELECT count(*) FROM events") == 2)
    }

    @Test func failsAFileLevelProblemEvenWhenSkippingRows() throws {
        let temp = try TemporaryStore()
        let path = try temp.write("cols.csv", "time,device,app\n2013-11-09T22:36:45Z,d,a\n")
        let store = try temp.open()
        var rejected = 0
        #expect(throws: TraceError.self) { try store.ingest(path, skipInvalid: true, onReject: { _, _ in rejected += 1 }) }
        #expect(rejected == 0)
        #expect(try store.files().isEmpty)
    }

    @Test func ingestsAnEmptyButValidFileAsZeroEvents() throws {
        let temp = try TemporaryStore()
        let path = try temp.write("header-only.csv", header)
        let store = try temp.open()
        let result = try store.ingest(path)
        #expect(result.status == .ingested)
        #expect(result.events == 0)
        #expect(try store.files().map(\.rows) == [0])
    }

    @Test func refusesAnEmptyFile() throws {
        let temp = try TemporaryStore()
        let path = try temp.write("empty.csv", "")
        let store = try temp.open()
        let error = #expect(throws: TraceError.self) { try store.ingest(path) }
        #expect(error?.description.hasPrefix("\(path): the file is empty") == true)
        #expect(try store.files().isEmpty)
    }

    @Test func keepsEventsAcrossReopening() throws {
        let temp = try TemporaryStore()
        let path = try temp.write("a.csv", header + "2013-11-09T22:36:45Z,dev-1,app,launch,,,\n")
        do {
            let store = try temp.open()
            try store.ingest(path)
        }
        let reopened = try temp.open(create: false)
        #expect(try reopened.stats().events == 1)
        #expect(try reopened.eventRows().count == 1)
    }

    /// A file about as large as the store or larger goes in without the history index, which
    /// is built again before the commit; a small file into a large store keeps it. Either way the
    /// index is there after, plans read through it, and a failed ingest leaves it as it was.
    @Test func rebuildsTheHistoryIndexOnlyForAFileAsLargeAsTheStore() throws {
        let temp = try TemporaryStore()
        let store = try temp.open()
        let ingestor = Ingestor(store: store, options: .init(now: fixedNow))
        #expect(try ingestor.rebuildsHistoryIndex(bytes: 80, gzip: false), "an empty store")
        #expect(try !ingestor.rebuildsHistoryIndex(bytes: nil, gzip: false), "standard input: size unknown")
        let rows = (0..<2_000).map { "2013-11-09T22:\(String(format: "%02d", $0 / 60 % 60)):\(String(format: "%02d", $0 % 60))Z,d\($0 % 7),com.a,launch,,,\n" }
        try store.ingest(try temp.write("big.csv", header + rows.joined()))
        #expect(try store.rows("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'event_log'") == [Schema.historyIndex])
        var plan: [String] = []
        do {
            let explain = try store.connection.prepare("EXPLAIN QUERY PLAN SELECT id FROM event_log WHERE device_id = 1 AND time_us < 5")
            while try explain.step() { plan.append(explain.text(3)) }
        }
        #expect(plan.contains { $0.contains(Schema.historyIndex) }, "\(plan)")
        #expect(try !ingestor.rebuildsHistoryIndex(bytes: 80 * 1_000, gzip: false), "1,000 rows into 2,000")
        #expect(try ingestor.rebuildsHistoryIndex(bytes: 16 * 2_000, gzip: true), "2,000 gzipped rows into 2,000")
        var history: [Int64] = []
        try store.deviceHistory(ofDevice: 1, beforeMicros: .max) { history.append($0.timeMicros) }
        #expect(history.count == 2_000 / 7 + 1 && history == history.sorted())

        // A bad row at the end of a file that would rebuild it: the store, index included, as before.
        let before = try store.dump()
        let bad = try temp.write("bad.csv", header + rows.joined() + rows.joined() + "2013-11-09T23:00:00Z,d1,com.a,wave,,,\n")
        #expect(throws: TraceError.self) { try store.ingest(bad) }
        #expect(try store.dump() == before)

        // With a statement of the connection still reading, the index cannot be dropped: the
        // file goes in through it.
        let reading = try store.connection.prepare("SELECT id FROM event_log")
        #expect(try reading.step())
        let again = try temp.write("again.csv", header + String(repeating: rows.joined(), count: 5))
        let size = Int64(try FileManager.default.attributesOfItem(atPath: again)[.size] as! Int)
        #expect(try ingestor.rebuildsHistoryIndex(bytes: size, gzip: false), "large enough to rebuild, were it not for the reader")
        try store.ingest(again)
        #expect(try store.rows("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'event_log'") == [Schema.historyIndex])
        _ = reading
    }
}
