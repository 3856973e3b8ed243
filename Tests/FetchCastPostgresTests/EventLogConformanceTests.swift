import FetchCastPostgres
import FetchCastStore
import FetchCastTestSupport
import FetchCastTrace
import Testing

/// The engines every conformance test runs on.
enum Engine: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgres

    var testDescription: String { rawValue }

    /// SQLite always; PostgreSQL when `FETCHCAST_TEST_POSTGRES` names a server (else
    /// ``EventLogConformanceTests/postgresCasesRun()`` is reported skipped, with why).
    static let available: [Engine] = PostgresTestDatabase.adminURL == nil ? [.sqlite] : [.sqlite, .postgres]
}

/// An event log under test: where it is (a Sendable value), and how to open a connection to it.
struct LogUnderTest: Sendable {
    var engine: Engine
    /// The SQLite file, or the PostgreSQL URL.
    var location: String
    /// The test database, for PostgreSQL.
    var database: PostgresTestDatabase?

    /// A new connection (a new `Store` for SQLite), creating the tables when missing.
    func open() async throws -> any EventLogWriter {
        switch engine {
        case .sqlite: return try Store(path: location, create: true)
        case .postgres: return try await PostgresEventLog.open(try PostgresLocation(url: location), create: true)
        }
    }

    /// Runs `body` on a fresh, empty log of `engine` (a new file, or a new database dropped
    /// afterwards); PostgreSQL cases are skipped, visibly, when no server was given.
    static func with(
        _ engine: Engine, _ body: (LogUnderTest, TemporaryDirectory) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory()
        switch engine {
        case .sqlite:
            try await body(LogUnderTest(engine: .sqlite, location: directory.path + "/store.sqlite"), directory)
        case .postgres:
            let database = try await PostgresTestDatabase.create()
            do {
                try await body(LogUnderTest(engine: .postgres, location: database.url, database: database), directory)
            } catch {
                await database.drop()
                throw error
            }
            await database.drop()
        }
    }
}

/// What a reader sees of a log: compared before and after a failed append.
struct Snapshot: Equatable {
    var stats: StoreStats
    var devices: [DeviceSummary]
    var deviceNames: [String]
    var appNames: [String]
    var files: Int64

    init(_ log: any EventLogReader) async throws {
        stats = try await log.stats()
        // Who the session runs as (PostgreSQL's only) is not what the log holds.
        stats.connectedAs = nil
        devices = try await log.devices(top: 3)
        deviceNames = try await log.sortedDeviceNames()
        appNames = try await log.sortedAppNames()
        files = try await log.fileCount()
    }
}

/// Appends `text` as `name` to the log under test and to the reference store.
func append(_ text: String, _ name: String, _ under: LogUnderTest, _ reference: Store, _ directory: TemporaryDirectory) async throws {
    let path = try directory.write(name, text)
    let log = try await under.open()
    _ = try await log.append(path: path, name: name, options: fixedOptions())
    await log.close()
    _ = try reference.append(path: path, name: name, options: fixedOptions())
}

/// Options with a fixed clock.
func fixedOptions(skipInvalid: Bool = false) -> IngestOptions {
    IngestOptions(skipInvalid: skipInvalid, now: { 1_700_000_000 })
}

let header = "time,device,app,event,result,bytes,duration_ms,network,power,battery,low_power\n"

/// One of each kind of row, on two devices, over two local days of one of them.
let mixedTrace = header + """
    2024-01-01T08:00:00Z,d1,news,launch,,,,,,,
    2024-01-01T08:05:00Z,d1,mail,launch,,,,,,,
    2024-01-02T09:00:00+02:00,d1,news,launch,,,,,,,
    2024-01-01T08:10:00Z,d2,news,fetch,newData,100,20,,,,
    2024-01-01T10:00:00Z,,news,publish,,,,,,,
    2024-01-01T11:00:00Z,d2,,state,,,,wifi,charging,80,off

    """

/// `rows` launches over `devices` devices, one a minute.
func generatedTrace(rows: Int, devices: Int = 7, firstSecond: Int = 1_700_000_000, tag: String = "") -> String {
    var text = header
    text.reserveCapacity(rows * 40)
    for i in 0..<rows {
        text += "\(firstSecond + 60 * i),dev\(tag)\(i % devices),app\(i % 5),launch,,,,,,,\n"
    }
    return text
}

@Suite("Event log conformance (every engine)")
struct EventLogConformanceTests {
    /// Stands for the PostgreSQL cases of every test below: skipped, with why, when they are
    /// not run, so that a run without a server does not pass silently.
    @Test(.enabled(if: PostgresTestDatabase.adminURL != nil, Comment(rawValue: PostgresTestDatabase.skipReason)))
    func postgresCasesRun() {
        #expect(Engine.available.contains(.postgres))
    }

    @Test(arguments: Engine.available)
    func sameBytesTwiceAddNothing(engine: Engine) async throws {
        try await LogUnderTest.with(engine) { under, directory in
            let log = try await under.open()
            let file = try directory.write("a.csv", mixedTrace)
            let copy = try directory.write("copy-of-a.csv", mixedTrace)
            let first = try await log.append(path: file, name: nil, options: fixedOptions())
            #expect(first.status == .ingested)
            #expect(first.events == 6)
            let before = try await Snapshot(log)
            let again = try await log.append(path: file, name: nil, options: fixedOptions())
            let renamed = try await log.append(path: copy, name: nil, options: fixedOptions())
            #expect(again.status == .alreadyIngested)
            #expect(renamed.status == .alreadyIngested)
            #expect(again.sha256 == first.sha256)
            #expect(try await Snapshot(log) == before)
            #expect(before.files == 1)
            await log.close()
        }
    }

    @Test(arguments: Engine.available)
    func countsOfEveryKind(engine: Engine) async throws {
        try await LogUnderTest.with(engine) { under, directory in
            let log = try await under.open()
            _ = try await log.append(path: try directory.write("a.csv", mixedTrace), name: nil, options: fixedOptions())
            let stats = try await log.stats()
            #expect(stats.files == 1)
            #expect(stats.events == 6)
            #expect(stats.launches == 3)
            #expect(stats.fetches == 1)
            #expect(stats.publishes == 1)
            #expect(stats.states == 1)
            #expect(stats.devices == 2)
            #expect(stats.apps == 2)
            #expect(stats.firstEvent == "2024-01-01T08:00:00Z")
            #expect(stats.lastEvent == "2024-01-02T07:00:00Z")
            // d1 launched on 2024-01-01 (UTC) and on 2024-01-02 (local, +02:00).
            #expect(stats.activeDeviceDays == 2)
            #expect(stats.launchesPerDeviceDay == 1.5)
            let devices = try await log.devices(top: 3)
            #expect(devices.map(\.device) == ["d1", "d2"])
            #expect(devices[0].events == 3)
            #expect(devices[0].launches == 3)
            #expect(devices[0].topApps == [.init(app: "news", launches: 2), .init(app: "mail", launches: 1)])
            #expect(devices[1].events == 2)
            #expect(devices[1].topApps.isEmpty)
            #expect(try await log.sortedDeviceNames() == ["d1", "d2"])
            #expect(try await log.sortedAppNames() == ["", "mail", "news"])
            await log.close()
        }
    }

    /// A bad row after more than one parser batch (16,384 rows) already went in: the whole
    /// file is rolled back, its new names included.
    @Test(arguments: Engine.available)
    func badFileLeavesTheLogAsItWas(engine: Engine) async throws {
        try await LogUnderTest.with(engine) { under, directory in
            let log = try await under.open()
            _ = try await log.append(path: try directory.write("good.csv", mixedTrace), name: nil, options: fixedOptions())
            let before = try await Snapshot(log)
            let bad = try directory.write("bad.csv", generatedTrace(rows: 20_000, tag: "new") + "not-a-time,d9,x,launch,,,,,,,\n")
            await #expect(throws: TraceError.self) {
                _ = try await log.append(path: bad, name: nil, options: fixedOptions())
            }
            #expect(try await Snapshot(log) == before)
            if let database = under.database {
                #expect(try await database.strings("SELECT count(*)::text FROM event_log") == ["6"])
            }
            // The log still takes files after the failure.
            let next = try await log.append(path: try directory.write("next.csv", generatedTrace(rows: 10)), name: nil, options: fixedOptions())
            #expect(next.status == .ingested)
            #expect(try await log.stats().events == 16)
            await log.close()
        }
    }

    @Test(arguments: Engine.available)
    func namesThatOnlyLookAlikeStayDistinct(engine: Engine) async throws {
        // Case, Unicode normalisation (é precomposed and decomposed), a trailing space.
        let names = ["Alice", "alice", "caf\u{E9}", "cafe\u{301}", "bob", "bob "]
        var trace = header
        for (i, name) in names.enumerated() {
            trace += "2024-01-01T08:0\(i):00Z,\(name),\(name),launch,,,,,,,\n"
        }
        try await LogUnderTest.with(engine) { under, directory in
            let log = try await under.open()
            _ = try await log.append(path: try directory.write("names.csv", trace), name: nil, options: fixedOptions())
            let stored = try await log.sortedDeviceNames()
            let bytewise = names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            #expect(stored.map { Array($0.utf8) } == bytewise.map { Array($0.utf8) })
            #expect(try await log.sortedAppNames().map { Array($0.utf8) } == bytewise.map { Array($0.utf8) })
            let stats = try await log.stats()
            #expect(stats.devices == 6)
            #expect(stats.apps == 6)
            let devices = try await log.devices(top: 1)
            #expect(devices.count == 6)
            #expect(devices.map { Array($0.device.utf8) } == bytewise.map { Array($0.utf8) })
            #expect(devices.allSatisfy { $0.events == 1 && $0.topApps.count == 1 && $0.topApps[0].app.utf8.elementsEqual($0.device.utf8) })
            await log.close()
        }
    }

    /// Four writers on four connections at once, two of them with the same bytes: every
    /// distinct file is added once, the repeated one once.
    @Test(arguments: Engine.available)
    func concurrentWriters(engine: Engine) async throws {
        try await LogUnderTest.with(engine) { under, directory in
            // The schema first, so that the writers race on appends, not on creating it.
            await (try await under.open()).close()
            let files = try (0..<3).map { try directory.write("part\($0).csv", generatedTrace(rows: 3_000, firstSecond: 1_700_000_000 + $0, tag: "w\($0)")) }
            let paths = files + [files[0]]
            let results = try await withThrowingTaskGroup(of: FileIngestResult.self) { group in
                for path in paths {
                    group.addTask {
                        let log = try await under.open()
                        do {
                            let r = try await log.append(path: path, name: nil, options: fixedOptions())
                            await log.close()
                            return r
                        } catch {
                            await log.close()
                            throw error
                        }
                    }
                }
                var out: [FileIngestResult] = []
                for try await r in group { out.append(r) }
                return out
            }
            #expect(results.filter { $0.status == .ingested }.count == 3)
            #expect(results.filter { $0.status == .alreadyIngested }.count == 1)
            let log = try await under.open()
            let stats = try await log.stats()
            #expect(stats.files == 3)
            #expect(stats.events == 9_000)
            #expect(stats.devices == 21)
            await log.close()
        }
    }
}
