import Foundation
import Testing

/// `fetchcast ingest` skips the events the store already holds (issue 27, items 10 and 11).
struct DuplicateIngestCLITests {
    /// `ingest --format json`, with the counts of events skipped.
    struct Summary: Decodable {
        struct File: Decodable {
            var path: String
            var status: String
            var events: Int
            var duplicates: Int
        }

        var files: [File]
        var events: Int
        var duplicates: Int
    }

    /// `good.csv`'s rows in reverse order: other bytes, the same 5 events.
    static func writeReversed(_ ws: Workspace) throws {
        var lines = try String(contentsOfFile: ws.path("good.csv"), encoding: .utf8).split(separator: "\n").map(String.init)
        let header = lines.removeFirst()
        try ws.write("sorted.csv", ([header] + lines.reversed()).joined(separator: "\n") + "\n")
    }

    @Test func aReorderedTraceAddsNothingAndSaysSo() throws {
        let ws = try Workspace()
        try ws.copyFixture("good.csv")
        try Self.writeReversed(ws)
        #expect(try ws.run(["ingest", "good.csv"]).status == 0)
        let again = try ws.run(["ingest", "sorted.csv"])
        #expect(again.status == 0, "\(again.err)")
        #expect(again.out.isEmpty)
        #expect(again.err == "sorted.csv: all 5 events are already in the store; nothing added (--keep-duplicates adds them)\n")
        #expect(try ws.stats() == IngestCLITests.goodStats.with(files: 2))
    }

    @Test func aGzippedCopyAddsNothing() throws {
        let ws = try Workspace()
        try ws.copyFixture("good.csv")
        try ws.gzip("good.csv")
        #expect(try ws.run(["ingest", "good.csv"]).status == 0)
        let copy = try ws.run(["ingest", "--format", "json", "good.csv.gz"])
        #expect(copy.status == 0, "\(copy.err)")
        let summary = try copy.json(Summary.self)
        #expect(summary.files.map(\.status) == ["ingested"])
        #expect((summary.events, summary.duplicates) == (0, 5))
        #expect((summary.files[0].events, summary.files[0].duplicates) == (0, 5))
        #expect(try ws.stats().events == 5)
    }

    @Test func anOverlappingTraceAddsItsNewEventsAndCountsTheRest() throws {
        let ws = try Workspace()
        try ws.copyFixture("good.csv")
        try ws.write("more.csv", """
            time,device,app,event,result,bytes,duration_ms
            2013-11-09T22:40:00Z,dev-1,com.example.news,fetch,newData,2048,310
            2013-11-09T22:45:00Z,,com.example.news,publish,,,
            2013-11-11T08:00:00Z,dev-2,com.example.mail,launch,,,

            """)
        let result = try ws.run(["ingest", "good.csv", "more.csv"])
        #expect(result.status == 0, "\(result.err)")
        let lines = result.err.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(result.err)")
        #expect(lines[1].hasPrefix("more.csv: 1 event in "), "\(result.err)")
        #expect(lines[1].hasSuffix("; skipped 2 already in the store (--keep-duplicates adds them)"), "\(result.err)")
        #expect(lines[2] == "2 files: 6 events added, 2 skipped as already in the store, 0 already ingested")
        #expect(try ws.stats().events == 6)
    }

    @Test func keepDuplicatesAddsThemAgain() throws {
        let ws = try Workspace()
        try ws.copyFixture("good.csv")
        try Self.writeReversed(ws)
        #expect(try ws.run(["ingest", "good.csv"]).status == 0)
        let again = try ws.run(["ingest", "--keep-duplicates", "--format", "json", "sorted.csv"])
        #expect(again.status == 0, "\(again.err)")
        let summary = try again.json(Summary.self)
        #expect((summary.events, summary.duplicates) == (5, 0))
        #expect(try ws.stats().events == 10)
    }
}

extension StatsJSON {
    /// The same statistics with another number of files.
    func with(files: Int) -> StatsJSON {
        var copy = self
        copy.files = files
        return copy
    }
}
