import Foundation
import Testing
@testable import FetchCastStore  // the store's connection, to check integrity

/// `fetchcast ingest`, `stats`, `files` and `forget`, run as the built binary.
struct IngestCLITests {
    /// What `good.csv` holds: 5 events (one duplicated launch), 2 devices, 2 apps.
    static let goodStats = StatsJSON(
        schema: 1, files: 1, events: 5, devices: 2, apps: 2, launches: 3, fetches: 1, publishes: 1, rejected: 0,
        firstEvent: "2013-11-09T22:36:45Z", lastEvent: "2013-11-10T08:00:00Z",
        activeDeviceDays: 2, launchesPerDeviceDay: 1.5)

    static let zeroStats = StatsJSON(
        schema: 1, files: 0, events: 0, devices: 0, apps: 0, launches: 0, fetches: 0, publishes: 0, rejected: 0,
        firstEvent: nil, lastEvent: nil, activeDeviceDays: 0, launchesPerDeviceDay: 0)

    @Test func ingestsAndSummarises() throws {
        let ws = try Workspace()
        try ws.copyFixture("good.csv")
        let ingest = try ws.run(["ingest", "good.csv"])
        #expect(ingest.status == 0, "\(ingest.err)")
        #expect(ingest.out.isEmpty)
        #expect(ingest.err.hasPrefix("good.csv: 5 events in "), "\(ingest.err)")
        #expect(FileManager.default.fileExists(atPath: ws.path("fetchcast.sqlite")))

        #expect(try ws.stats() == Self.goodStats)
        let table = try ws.run(["stats"])
        #expect(table.status == 0)
        #expect(table.err.isEmpty)
        let rows = table.out.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        #expect(rows.contains(["events", "5"]))
        #expect(rows.contains(["launches", "per", "day", "with", "launches", "1.5"]))
        #expect(rows.contains(["days", "with", "launches", "(device-days)", "2"]))
    }

    @Test func printsAJSONSummaryOnStdout() throws {
        let ws = try Workspace()
        try ws.copyFixture("good.csv")
        let result = try ws.run(["ingest", "--format", "json", "good.csv"])
        #expect(result.status == 0)
        let summary = try result.json(IngestJSON.self)
        #expect(summary.schema == 1)
        #expect(summary.events == 5)
        #expect(summary.failed == nil)
        #expect(summary.files.map(\.path) == ["good.csv"])
        #expect(summary.files.map(\.status) == ["ingested"])
        #expect(summary.files.first?.format == "csv")
        #expect(summary.files.first?.gzip == false)
        #expect(summary.files.first?.sha256.count == 64)
        #expect(result.err.hasPrefix("good.csv: 5 events"))
    }

    @Test func failsABadFileWithItsLocationOnStderrOnly() throws {
        let ws = try Workspace()
        try ws.copyFixture("bad-row.csv")
        let result = try ws.run(["ingest", "bad-row.csv"])
        #expect(result.status == 1)
        #expect(result.out.isEmpty)
        let lines = result.err.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("error: bad-row.csv:3:22: the device is empty (expected ") == true, "\(result.err)")
        #expect(lines.contains("bad-row.csv added nothing."), "\(result.err)")
        // The store this ingest created is removed again.
        #expect(!FileManager.default.fileExists(atPath: ws.path("fetchcast.sqlite")))
    }

    @Test func keepsTheFilesBeforeAFailingOne() throws {
        let ws = try Workspace()
        try ws.copyFixture("good.csv")
        try ws.copyFixture("bad-row.csv")
        let result = try ws.run(["ingest", "good.csv", "bad-row.csv"])
        #expect(result.status == 1)
        #expect(result.out.isEmpty)
        #expect(result.err.contains("error: bad-row.csv:3:22: "), "\(result.err)")
        #expect(result.err.contains("bad-row.csv added nothing; good.csv before it stay ingested."), "\(result.err)")
        let files = try ws.run(["files", "--format", "json"]).jsonLines(StoredFileJSON.self)
        #expect(files.map(\.name) == ["good.csv"])
        #expect(try ws.stats() == Self.goodStats)
    }

    @Test func reportsTheFailureInTheJSONSummary() throws {
        let ws = try Workspace()
        try ws.copyFixture("good.csv")
        try ws.copyFixture("bad-row.csv")
        let result = try ws.run(["ingest", "--format", "json", "good.csv", "bad-row.csv"])
        #expect(result.status == 1)
        let summary = try result.json(IngestJSON.self)
        #expect(summary.files.map(\.path) == ["good.csv"])
        #expect(summary.failed?.hasPrefix("bad-row.csv:3:22: ") == true)
    }

    @Test func saysAlreadyIngestedAndAddsNothing() throws {
        let ws = try Workspace()
        try ws.copyFixture("good.csv")
        try #require(try ws.run(["ingest", "good.csv"]).status == 0)
        try FileManager.default.copyItem(atPath: ws.path("good.csv"), toPath: ws.path("renamed.csv"))
        let again = try ws.run(["ingest", "good.csv", "renamed.csv"])
        #expect(again.status == 0)
        #expect(again.out.isEmpty)
        #expect(again.err.contains("good.csv: already ingested"), "\(again.err)")
        #expect(again.err.contains("renamed.csv: already ingested"), "\(again.err)")
        #expect(again.err.contains("nothing added"))
        let json = try ws.run(["ingest", "--format", "json", "good.csv"]).json(IngestJSON.self)
        #expect(json.files.map(\.status) == ["already_ingested"])
        #expect(json.events == 0)
        #expect(try ws.stats() == Self.goodStats)
    }

    @Test func readsStandardInputForADash() throws {
        let ws = try Workspace()
        let text = try Data(contentsOf: try #require(Bundle.module.url(forResource: "good", withExtension: "csv", subdirectory: "Fixtures")))
        let result = try ws.run(["ingest", "-"], stdin: text)
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err.hasPrefix("-: 5 events"), "\(result.err)")
        #expect(try ws.stats() == Self.goodStats)
        let files = try ws.run(["files", "--format", "json"]).jsonLines(StoredFileJSON.self)
        #expect(files.map(\.name) == ["-"])
        // The same bytes again through stdin are recognised by their hash.
        let again = try ws.run(["ingest", "-"], stdin: text)
        #expect(again.status == 0)
        #expect(again.err.contains("already ingested"), "\(again.err)")
    }

    @Test func readsGzipFromStandardInputByItsMagicBytes() throws {
        let ws = try Workspace()
        try ws.copyFixture("good.csv")
        try ws.gzip("good.csv")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: ws.path("good.csv.gz")))
        let result = try ws.run(["ingest", "--format", "json", "-"], stdin: bytes)
        #expect(result.status == 0, "\(result.err)")
        #expect(try result.json(IngestJSON.self).files.map(\.gzip) == [true])
        #expect(try ws.stats() == Self.goodStats)
    }

    @Test func skipsInvalidRowsIntoARejectsFile() throws {
        let ws = try Workspace()
        try ws.copyFixture("mixed.csv")
        let result = try ws.run(["ingest", "--skip-invalid", "--rejects", "rejects.csv", "mixed.csv"])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err.contains("mixed.csv: 2 events"), "\(result.err)")
        #expect(result.err.contains("2 rejected rows written to rejects.csv"), "\(result.err)")
        let rejects = try String(contentsOfFile: ws.path("rejects.csv"), encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(rejects.count == 3)
        #expect(rejects.first == "file,line,column,reason,text")
        #expect(rejects.dropFirst().first?.hasPrefix("mixed.csv,3,51,") == true, "\(rejects)")
        #expect(rejects.dropFirst(2).first?.hasPrefix("mixed.csv,4,53,") == true, "\(rejects)")
        let stats = try ws.stats()
        #expect(stats.events == 2)
        #expect(stats.rejected == 2)
    }

    @Test func forgetsAFile() throws {
        let ws = try Workspace()
        try ws.copyFixture("good.csv")
        try #require(try ws.run(["ingest", "good.csv"]).status == 0)
        let forget = try ws.run(["forget", "good.csv"])
        #expect(forget.status == 0)
        #expect(forget.out.isEmpty)
        #expect(forget.err.hasPrefix("forgot good.csv: 5 events removed"), "\(forget.err)")
        var stats = try ws.stats()
        stats.files = 0
        #expect(stats == Self.zeroStats)
        let unknown = try ws.run(["forget", "good.csv"])
        #expect(unknown.status == 1)
        #expect(unknown.err.contains("no ingested file is named or hashed 'good.csv'"), "\(unknown.err)")
    }

    @Test func printsAnOverviewWithoutArguments() throws {
        let ws = try Workspace()
        let result = try ws.run([])
        #expect(result.status == 0)
        let text = result.out + result.err
        #expect(text.contains("fetchcast ingest"))
        #expect(text.contains("fetchcast stats"))
        #expect(!FileManager.default.fileExists(atPath: ws.path("fetchcast.sqlite")))
    }

    @Test(arguments: [
        (["ingest", "-", "-"], "standard input (-) can be given only once"),
        (["ingest", "--utc-offset", "+25:00", "good.csv"], "--utc-offset '+25:00' is not an offset"),
        (["ingest", "--utc-offset", "+0:100", "good.csv"], "is not an offset"),
        (["stats", "--format", "xml"], "xml"),
    ])
    func rejectsInvalidFlagsWithUsageStatus(arguments: [String], message: String) throws {
        let ws = try Workspace()
        try ws.copyFixture("good.csv")
        let result = try ws.run(arguments)
        #expect(result.status == 64, "\(result.err)")
        #expect(result.out.isEmpty)
        #expect(result.err.contains(message), "\(result.err)")
        #expect(!FileManager.default.fileExists(atPath: ws.path("fetchcast.sqlite")))
    }

    @Test func refusesToReadAStoreThatDoesNotExist() throws {
        let ws = try Workspace()
        for command in ["stats", "files"] {
            let result = try ws.run([command, "--db", "fresh.sqlite", "--format", "json"])
            #expect(result.status == 1)
            #expect(result.out.isEmpty)
            #expect(result.err.contains("fresh.sqlite: no such store (--db); `fetchcast ingest FILE` creates one"), "\(result.err)")
        }
        #expect(!FileManager.default.fileExists(atPath: ws.path("fresh.sqlite")))
    }

    @Test func usesTheStoreNamedByTheEnvironment() throws {
        let ws = try Workspace()
        try ws.copyFixture("good.csv")
        let result = try ws.run(["ingest", "good.csv"], environment: ["FETCHCAST_DB": "env.sqlite"])
        #expect(result.status == 0)
        #expect(FileManager.default.fileExists(atPath: ws.path("env.sqlite")))
        #expect(!FileManager.default.fileExists(atPath: ws.path("fetchcast.sqlite")))
        #expect(try ws.stats(db: "env.sqlite") == Self.goodStats)
    }

    /// Paths that cannot be a store are named for what they are, not in SQLite's words ("disk
    /// I/O error [COMMIT]" for /dev/null, "schema version 0" for /proc/self/status).
    @Test(arguments: [
        (["ingest", "--db", "/dev/null", "good.csv"], "/dev/null: is not a regular file"),
        (["stats", "--db", "/dev/null"], "/dev/null: is not a regular file"),
        (["ingest", "--db", "/proc/self/status", "good.csv"], "/proc/self/status: the file is not a FetchCast store"),
        (["predict", "--db", "/proc/self/status"], "/proc/self/status: the file is not a FetchCast store"),
        (["ingest", "--db", "sub", "good.csv"], "sub: is a directory; --db names the store's file (e.g. --db sub/fetchcast.sqlite)"),
        (["serve", "--db", "/dev/null", "--insecure-no-auth"], "/dev/null: is not a regular file"),
        (["ingest", "--db", "", "good.csv"], "--db is empty"),
        (["serve", "--db", "", "--insecure-no-auth"], "--db is empty"),
    ])
    func refusesAPathThatCannotBeAStore(arguments: [String], message: String) throws {
        let ws = try Workspace()
        try ws.copyFixture("good.csv")
        try FileManager.default.createDirectory(atPath: ws.path("sub"), withIntermediateDirectories: true)
        let result = try ws.run(arguments)
        #expect(result.status != 0)
        #expect(result.err.contains(message), "\(result.err)")
        #expect(!result.err.contains("SQL failed") && !result.err.contains("schema version"), "\(result.err)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: ws.path("sub")).isEmpty)
    }

    @Test func refusesAFileThatIsNotAStore() throws {
        let ws = try Workspace()
        try ws.write("notes.txt", "not a database\n")
        let result = try ws.run(["stats", "--db", "notes.txt"])
        #expect(result.status == 1)
        #expect(result.out.isEmpty)
        #expect(result.err.contains("notes.txt: the file is not a FetchCast store"), "\(result.err)")
        #expect(try String(contentsOfFile: ws.path("notes.txt"), encoding: .utf8) == "not a database\n")
    }
}

/// Faults and concurrency: `kill -9`, two writers, a reader during a write.
@Suite(.serialized)
struct IngestConcurrencyCLITests {
    /// Rows of the large trace: several seconds of ingest in a debug build, so that a kill or a
    /// concurrent `stats` lands in the middle of it.
    static let largeRows = 600_000

    @Test func killDuringIngestLeavesTheStoreAsBeforeThatFile() throws {
        let ws = try Workspace()
        try ws.copyFixture("good.csv")
        try #require(try ws.run(["ingest", "good.csv"]).status == 0)
        let before = try ws.stats()
        try ws.generateTrace("large.csv.gz", rows: Self.largeRows)

        let ingest = try ws.start(["ingest", "large.csv.gz"])
        Thread.sleep(forTimeInterval: 0.3)
        try #require(ingest.isRunning, "the ingest ended before it could be killed; make the trace larger")
        ingest.kill()
        let killed = try ingest.wait()
        #expect(killed.signalled)
        #expect(killed.status == SIGKILL)

        #expect(try ws.stats() == before)
        let files = try ws.run(["files", "--format", "json"]).jsonLines(StoredFileJSON.self)
        #expect(files.map(\.name) == ["good.csv"])
        let store = try Store(path: ws.path("fetchcast.sqlite"), create: false)
        let check = try store.connection.prepare("PRAGMA integrity_check")
        #expect(try check.step())
        #expect(check.text(0) == "ok")
        #expect(try store.connection.scalarInt("SELECT count(*) FROM events") == Int64(before.events))
        // The store still takes new files.
        try ws.write("later.csv", "time,device,app,event\n2013-11-12T08:00:00Z,dev-9,com.example.news,launch\n")
        #expect(try ws.run(["ingest", "later.csv"]).status == 0)
        #expect(try ws.stats().events == before.events + 1)
    }

    @Test func twoIngestsStartedTogetherOnANewStoreBothSucceed() throws {
        let ws = try Workspace()
        try ws.generateTrace("a.csv.gz", rows: 20_000, firstSecond: 1_600_000_000)
        try ws.generateTrace("b.csv.gz", rows: 20_000, firstSecond: 1_650_000_000)
        for round in 0..<3 {
            let db = "new-\(round).sqlite"
            let first = try ws.start(["ingest", "--db", db, "a.csv.gz"])
            let second = try ws.start(["ingest", "--db", db, "b.csv.gz"])
            let a = try first.wait(), b = try second.wait()
            #expect(a.status == 0, "round \(round): \(a.err)")
            #expect(b.status == 0, "round \(round): \(b.err)")
            let files = try ws.run(["files", "--db", db, "--format", "json"]).jsonLines(StoredFileJSON.self)
            #expect(Set(files.map(\.name)) == ["a.csv.gz", "b.csv.gz"])
            #expect(try ws.stats(db: db).events == 40_000)
        }
    }

    @Test func statsAnswersWhileAnIngestRuns() throws {
        let ws = try Workspace()
        try ws.copyFixture("good.csv")
        try #require(try ws.run(["ingest", "good.csv"]).status == 0)
        let before = try ws.stats()
        try ws.generateTrace("large.csv.gz", rows: Self.largeRows)

        let ingest = try ws.start(["ingest", "large.csv.gz"])
        Thread.sleep(forTimeInterval: 0.3)
        try #require(ingest.isRunning)
        let during = try ws.run(["stats", "--format", "json"])
        let stillRunning = ingest.isRunning
        #expect(during.status == 0, "\(during.err)")
        #expect(try during.json(StatsJSON.self) == before)
        #expect(stillRunning, "the ingest ended before stats did; make the trace larger")

        let finished = try ingest.wait()
        #expect(finished.status == 0, "\(finished.err)")
        #expect(try ws.stats().events == before.events + Self.largeRows)
    }
}
