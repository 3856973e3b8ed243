import Foundation
import Testing

/// `fetchcast ingest` when files fail: what it names, `--keep-going`, the store it leaves, ids it
/// refuses, and the words of its summaries.
struct IngestFailureCLITests {
    /// A second valid file: 2 launches of one device.
    static let other = "time,device,app,event\n2013-11-12T08:00:00Z,dev-9,com.example.maps,launch\n2013-11-12T09:00:00Z,dev-9,com.example.maps,launch\n"

    @Test func namesTheFilesItNeverTried() throws {
        let ws = try Workspace()
        for name in ["good.csv", "bad-row.csv", "mixed.csv"] { try ws.copyFixture(name) }
        try ws.write("other.csv", Self.other)
        let result = try ws.run(["ingest", "--format", "json", "good.csv", "bad-row.csv", "mixed.csv", "other.csv"])
        #expect(result.status == 1)
        #expect(result.err.contains("bad-row.csv added nothing; good.csv before it stay ingested."), "\(result.err)")
        #expect(result.err.contains("not tried: mixed.csv, other.csv (ingest stops at the first bad file; --keep-going ingests every good one)"), "\(result.err)")
        let summary = try result.json(IngestJSON.self)
        #expect(summary.notTried == ["mixed.csv", "other.csv"])
        #expect(summary.failures?.map(\.file) == ["bad-row.csv"])
        #expect(summary.failed == summary.failures?.first?.error)
        #expect(try ws.stats() == IngestCLITests.goodStats)
    }

    @Test func keepsGoingPastEveryBadFile() throws {
        let ws = try Workspace()
        for name in ["good.csv", "bad-row.csv", "mixed.csv"] { try ws.copyFixture(name) }
        try ws.write("other.csv", Self.other)
        let result = try ws.run(["ingest", "--keep-going", "--format", "json", "bad-row.csv", "good.csv", "mixed.csv", "other.csv"])
        #expect(result.status == 1)
        #expect(result.err.contains("error: bad-row.csv:3:22: "), "\(result.err)")
        #expect(result.err.contains("error: mixed.csv:3:"), "\(result.err)")
        #expect(result.err.contains("4 files: 7 events added, 0 already ingested, 2 failed (bad-row.csv, mixed.csv)"), "\(result.err)")
        #expect(!result.err.contains("not tried"))
        let summary = try result.json(IngestJSON.self)
        #expect(summary.files.map(\.path) == ["good.csv", "other.csv"])
        #expect(summary.failures?.map(\.file) == ["bad-row.csv", "mixed.csv"])
        #expect(summary.notTried == [])
        // Each bad file added nothing: only the good files' events are stored.
        let files = try ws.run(["files", "--format", "json"]).jsonLines(StoredFileJSON.self)
        #expect(files.map(\.name) == ["good.csv", "other.csv"])
        let stats = try ws.stats()
        #expect(stats.events == 7)
        #expect(stats.devices == 3)
    }

    @Test func keepsGoingWithoutFailuresExitsZero() throws {
        let ws = try Workspace()
        try ws.copyFixture("good.csv")
        try ws.write("other.csv", Self.other)
        let result = try ws.run(["ingest", "--keep-going", "good.csv", "other.csv"])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err.contains("2 files: 7 events added, 0 already ingested"), "\(result.err)")
    }

    @Test(arguments: [[String](), ["--keep-going"]])
    func removesAStoreItCreatedWhenNothingWasAdded(flags: [String]) throws {
        let ws = try Workspace()
        try ws.copyFixture("bad-row.csv")
        try ws.copyFixture("mixed.csv")
        let result = try ws.run(["ingest", "--db", "new.sqlite"] + flags + ["bad-row.csv", "mixed.csv"])
        #expect(result.status == 1)
        #expect(result.err.contains("removed new.sqlite: this ingest created it and added nothing"), "\(result.err)")
        for suffix in ["", "-wal", "-shm", "-journal"] {
            #expect(!FileManager.default.fileExists(atPath: ws.path("new.sqlite" + suffix)), "new.sqlite\(suffix) left behind")
        }
    }

    @Test func keepsAStoreThatExistedBefore() throws {
        let ws = try Workspace()
        try ws.copyFixture("good.csv")
        try ws.copyFixture("bad-row.csv")
        try #require(try ws.run(["ingest", "good.csv"]).status == 0)
        let result = try ws.run(["ingest", "bad-row.csv"])
        #expect(result.status == 1)
        #expect(!result.err.contains("removed"))
        #expect(try ws.stats() == IngestCLITests.goodStats)
    }

    @Test func keepsANewStoreWhenOneFileWasAdded() throws {
        let ws = try Workspace()
        try ws.copyFixture("good.csv")
        try ws.copyFixture("bad-row.csv")
        let result = try ws.run(["ingest", "--db", "new.sqlite", "--keep-going", "bad-row.csv", "good.csv"])
        #expect(result.status == 1)
        #expect(try ws.stats(db: "new.sqlite") == IngestCLITests.goodStats)
    }

    @Test(arguments: [
        ("nul.csv", Data("time,device,app,event\n2013-11-12T08:00:00Z,d".utf8) + Data([0]) + Data("x,com.a,launch\n".utf8), "nul.csv:2:22: the device id 'd\\u{0}x' holds the control character U+0000"),
        ("nul.jsonl", Data((#"{"time":"2013-11-12T08:00:00Z","device":"d\u0000x","app":"com.a","event":"launch"}"# + "\n").utf8), "nul.jsonl:1:42: the device id 'd\\u{0}x' holds the control character U+0000"),
    ])
    func refusesADeviceIdWithANul(name: String, bytes: Data, message: String) throws {
        // Stored through a C string, "d\0x" would become "d": another device's id.
        let ws = try Workspace()
        try ws.write("d.csv", "time,device,app,event\n2013-11-12T07:00:00Z,d,com.a,launch\n")
        try #require(try ws.run(["ingest", "d.csv"]).status == 0)
        try ws.write(name, bytes: bytes)
        let result = try ws.run(["ingest", name])
        #expect(result.status == 1)
        #expect(result.err.hasPrefix("error: \(message) (expected "), "\(result.err)")
        let stats = try ws.stats()
        #expect(stats.events == 1)
        #expect(stats.devices == 1)
    }

    @Test func keepsIdsThatDifferOnlyInCaseSpaceOrNormalisationApart() throws {
        let ws = try Workspace()
        // "é" precomposed and decomposed, a trailing space and a capital: five devices.
        try ws.write("ids.csv", "time,device,app,event\n2013-11-12T08:00:00Z,d\u{E9},a,launch\n2013-11-12T08:00:01Z,de\u{301},a,launch\n2013-11-12T08:00:02Z,d\u{E9} ,a,launch\n2013-11-12T08:00:03Z,D\u{E9},a,launch\n2013-11-12T08:00:04Z,\"d\u{E9}\",a,launch\n2013-11-12T08:00:05Z,x,a,launch\n")
        try #require(try ws.run(["ingest", "ids.csv"]).status == 0)
        let devices = try ws.run(["devices", "--format", "json"]).jsonLines(DeviceJSON.self)
        let ids = Set(devices.map { Array($0.device.utf8) })
        #expect(ids == Set(["d\u{E9}", "de\u{301}", "d\u{E9} ", "D\u{E9}", "x"].map { Array($0.utf8) }))
        #expect(devices.map(\.events).reduce(0, +) == 6)
    }

    @Test func speaksOfOneEventAndOneRejectedRowInTheSingular() throws {
        let ws = try Workspace()
        try ws.write("one.csv", "time,device,app,event,bytes\n2013-11-12T08:00:00Z,d,a,launch,\n2013-11-12T08:01:00Z,d,a,launch,-1\n")
        let result = try ws.run(["ingest", "--skip-invalid", "one.csv"])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err.hasPrefix("one.csv: 1 event in "), "\(result.err)")
        #expect(result.err.contains(", 1 rejected row written to fetchcast-rejects.csv"), "\(result.err)")
        let forget = try ws.run(["forget", "one.csv"])
        #expect(forget.err.hasPrefix("forgot one.csv: 1 event removed"), "\(forget.err)")
    }

    /// A store that fails SQLite's `quick_check` is refused by writers with the fix, and left
    /// byte for byte as it was (an ingest into one reported "1 event", exit 0).
    @Test func aDamagedStoreIsRefusedAndLeftAsItWas() throws {
        let ws = try Workspace()
        try ws.generateTrace("big.csv.gz", rows: 20_000)
        try #require(try ws.run(["ingest", "big.csv.gz"]).status == 0)
        try ws.copyFixture("good.csv")
        // Two cells of a table leaf page that is not the last one made to point at one place:
        // "out of order" to quick_check, unseen by an insert at the end of the table.
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: ws.path("fetchcast.sqlite"))))
        let pageSize = Int(bytes[16]) << 8 | Int(bytes[17])
        let pages = bytes.count / pageSize
        let leaf = try #require((2..<pages - 1).first { bytes[($0 - 1) * pageSize] == 0x0D && (Int(bytes[($0 - 1) * pageSize + 3]) << 8 | Int(bytes[($0 - 1) * pageSize + 4])) > 1 })
        let offset = (leaf - 1) * pageSize
        bytes[offset + 10] = bytes[offset + 8]
        bytes[offset + 11] = bytes[offset + 9]
        try Data(bytes).write(to: URL(fileURLWithPath: ws.path("fetchcast.sqlite")))
        for command in [["ingest", "good.csv"], ["forget", "big.csv.gz"]] {
            let result = try ws.run(command)
            #expect(result.status == 1, "\(command): \(result.err)")
            #expect(result.err.contains("the store is damaged (SQLite's quick_check:"), "\(result.err)")
            #expect(result.err.contains(".recover"), "\(result.err)")
            #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: ws.path("fetchcast.sqlite")))) == bytes)
        }
    }
}
