import FetchCastPostgres
import FetchCastPredict
import FetchCastServe
import FetchCastStore
import FetchCastTestSupport
import Foundation
import Synchronization
import Testing

/// Plans kept ahead on a PostgreSQL database are read with one statement and no transaction
/// (``ModelStore/withOneRead(keys:device:_:)``): they answer as an SQLite store's do, and a
/// device with events after its table is planned again.
@Suite(.enabled(if: PostgresTestDatabase.adminURL != nil, Comment(rawValue: PostgresTestDatabase.skipReason)))
struct PlansKeptAheadTests {
    /// Each device opens mail at 08:00, chat at 08:10 and news at 12:30 (UTC) for 10 days.
    private static func trace(devices: [String]) -> String {
        var rows = ["time,device,app,event"]
        for day in 0..<10 {
            for d in devices {
                let t = 1_699_833_600 + day * 86_400
                rows += ["\(t + 8 * 3600),\(d),mail,launch", "\(t + 8 * 3600 + 600),\(d),chat,launch", "\(t + 12 * 3600 + 1800),\(d),news,launch"]
            }
        }
        return rows.joined(separator: "\n") + "\n"
    }

    /// Each device's plan with default parameters from the same instant, after the traces' days.
    private static func plans(_ service: FetchCastService, devices: [String]) async throws -> [[Prediction]] {
        var plans: [[Prediction]] = []
        for device in devices {
            var request = PredictionRequest()
            request.device = device
            request.at = 1_700_656_260
            plans.append(try await service.plan(request))
        }
        return plans
    }

    /// Two services on the PostgreSQL database at `url` (two `serve` processes: one writes, one
    /// reads) and one on an SQLite store at `sqlitePath`; the writer and the SQLite service have
    /// ingested `file`, folded and warmed.
    private static func services(url: String, sqlitePath: String, holding file: String) async throws
        -> (writer: FetchCastService, reader: FetchCastService, sqlite: FetchCastService)
    {
        let storage = PostgresModelStore.serviceStorage(try PostgresLocation(url: url))
        let writer = try await FetchCastService(storage: storage, now: { 1_700_700_000 })
        let reader = try await FetchCastService(storage: storage, now: { 1_700_700_000 })
        let sqlite = try await FetchCastService(path: sqlitePath, now: { 1_700_700_000 })
        for service in [writer, sqlite] {
            _ = try await service.ingest(file: file, name: "a")
            try await service.foldPending()
            _ = try await service.keepSchedulersCurrent()
        }
        return (writer, reader, sqlite)
    }

    /// Two processes on one database do not warm at once: one waits for the other's turn (and
    /// stops waiting when asked to), then finds the devices current; a process that dies
    /// holding the turn gives it up with its connection.
    @Test func oneProcessWarmsAtATime() async throws {
        let database = try await PostgresTestDatabase.create()
        defer { Task { await database.drop() } }
        let directory = try TemporaryDirectory()
        let first = try directory.write("a.csv", Self.trace(devices: ["dev-0", "dev-1", "dev-2"]))
        let location = database.location, url = database.url
        struct Seen: Sendable { var waited = WarmOutcomeSeen(), asks = 0, afterTurn = WarmOutcomeSeen(), again = WarmOutcomeSeen(), afterDeath = WarmOutcomeSeen() }
        let seen = try await { () async throws -> Seen in
            var seen = Seen()
            let service = try await FetchCastService(storage: PostgresModelStore.serviceStorage(try PostgresLocation(url: url)), now: { 1_700_700_000 })
            _ = try await service.ingest(file: first, name: "a")
            try await service.foldPending()
            let other = try await PostgresModelStore.open(location)  // another process's warm-up connection
            let asks = Atomic<Int>(0)
            _ = try await other.withWarmUpTurn(shouldStop: { false }) {
                seen.waited = await WarmOutcomeSeen(try service.keepSchedulersCurrent(shouldStop: { asks.add(1, ordering: .relaxed).newValue >= 3 }))
            }
            seen.asks = asks.load(ordering: .relaxed)
            seen.afterTurn = await WarmOutcomeSeen(try service.keepSchedulersCurrent())
            seen.again = await WarmOutcomeSeen(try service.keepSchedulersCurrent())
            // Dies holding the turn: its connection closes without giving it back.
            _ = try await other.withWarmUpTurn(shouldStop: { false }) { await other.close() }
            seen.afterDeath = await WarmOutcomeSeen(try service.keepSchedulersCurrent(shouldStop: { false }))
            return seen
        }()
        #expect(seen.waited == WarmOutcomeSeen(devices: 0, complete: false), "waited for the other's turn, then stopped")
        #expect(seen.asks >= 3)
        #expect(seen.afterTurn == WarmOutcomeSeen(devices: 3, complete: true))
        #expect(seen.again == WarmOutcomeSeen(devices: 0, complete: true), "the next turn finds every device current")
        #expect(seen.afterDeath == WarmOutcomeSeen(devices: 0, complete: true))
    }

    /// What a warm-up did, to compare.
    struct WarmOutcomeSeen: Sendable, Equatable {
        var devices = 0, complete = false
        init(devices: Int = 0, complete: Bool = false) { (self.devices, self.complete) = (devices, complete) }
        init(_ outcome: ModelRepository.WarmOutcome) { (devices, complete) = (outcome.devices, outcome.complete) }
    }

    @Test func plansKeptAheadAnswerAsOnSQLiteAndNotAfterNewEvents() async throws {
        let database = try await PostgresTestDatabase.create()
        defer { Task { await database.drop() } }
        let directory = try TemporaryDirectory()
        let devices = ["dev-0", "dev-1", "dev-2", "\u{E9}", "e\u{301}"]
        let first = try directory.write("a.csv", Self.trace(devices: devices))
        let later = try directory.write("b.csv", "time,device,app,event\n1700650000,dev-1,news,launch\n")
        let url = database.url, sqlitePath = directory.path + "/s.sqlite"
        // Blocking calls on a thread of their own; what they return is checked here (an
        // expectation on that thread would not be the test's).
        struct Seen: Sendable {
            var complete: [Bool] = [], postgres: [[Prediction]] = [], sqlite: [[Prediction]] = [], ahead = 0
            var postgresAfter: [[Prediction]] = [], sqliteAfter: [[Prediction]] = [], aheadAfter = 0
        }
        let seen = try await { () async throws -> Seen in
            var seen = Seen()
            let services = await [
                try FetchCastService(storage: PostgresModelStore.serviceStorage(try PostgresLocation(url: url)), now: { 1_700_700_000 }),
                try await FetchCastService(path: sqlitePath, now: { 1_700_700_000 }),
            ]
            for service in services {
                _ = try await service.ingest(file: first, name: "a")
                try await service.foldPending()
                await seen.complete.append(try service.keepSchedulersCurrent().complete)
            }
            // A minute after each device's last event (12:30 of day 9), and 4 hours later.
            let asks: [Double] = [1_700_656_260, 1_700_670_660]
            func plans(_ service: FetchCastService) async throws -> [[Prediction]] {
                var out: [[Prediction]] = []
                for device in devices {
                    for at in asks {
                        var request = PredictionRequest()
                        request.device = device
                        request.at = at
                        await out.append(try service.plan(request))
                    }
                }
                return out
            }
            let (postgres, sqlite) = (services[0], services[1])
            (seen.postgres, seen.sqlite, seen.ahead) = await (try plans(postgres), try plans(sqlite), postgres.plansAnsweredAhead)
            // dev-1 opened news (at 10:46, before its last event) after the tables were planned:
            // planned again, the others not.
            for service in services { _ = try await service.ingest(file: later, name: "b") }
            (seen.postgresAfter, seen.sqliteAfter) = await (try plans(postgres), try plans(sqlite))
            seen.aheadAfter = postgres.plansAnsweredAhead - seen.ahead
            return seen
        }()
        #expect(seen.complete == [true, true])
        #expect(seen.postgres == seen.sqlite)
        #expect(seen.postgres.contains { !$0.isEmpty })
        #expect(seen.ahead == 2 * devices.count)
        #expect(seen.postgresAfter == seen.sqliteAfter)
        #expect(seen.postgresAfter != seen.postgres, "dev-1's plans change with its new launch")
        #expect(seen.aheadAfter == 2 * (devices.count - 1))
    }

    /// Plans kept ahead loaded into a second service's memory before any device asked
    /// (``FetchCastService/preloadPlans(shouldStop:)``) answer every device's first plan from
    /// memory, as SQLite's; a device with events after the last complete warm-up is left out of
    /// a later load (read when asked), and a loaded table stops answering once its device has
    /// events from another process. Each loaded table is the one a device's plan would read.
    @Test func preloadedPlansAnswerFirstPlansFromMemoryAsOnSQLite() async throws {
        let database = try await PostgresTestDatabase.create()
        defer { Task { await database.drop() } }
        let directory = try TemporaryDirectory()
        let devices = ["dev-0", "dev-1", "dev-2", "\u{E9}", "e\u{301}"]
        let first = try directory.write("a.csv", Self.trace(devices: devices) + "1700600000,e\u{301},news,launch\n")
        let later = try directory.write("b.csv", "time,device,app,event\n1700650000,dev-1,news,launch\n")
        let url = database.url, location = database.location, sqlitePath = directory.path + "/s.sqlite"
        struct Seen: Sendable {
            var sqlite: [[Prediction]] = [], preloaded: [[Prediction]] = [], sqliteAfter: [[Prediction]] = []
            var after: [[Prediction]] = [], late: [[Prediction]] = []
            var loaded = 0, again = 0, lateLoaded = 0, sqliteLoaded = 0, answered = 0, answeredAfter = 0, lateAnswered = 0
            var pages: [Int] = [], sameAsRead: [Bool] = []
        }
        let seen = try await { () async throws -> Seen in
            var seen = Seen()
            let storage = PostgresModelStore.serviceStorage(try PostgresLocation(url: url))
            let writer = try await FetchCastService(storage: storage, now: { 1_700_700_000 })
            let sqlite = try await FetchCastService(path: sqlitePath, now: { 1_700_700_000 })
            for service in [writer, sqlite] {
                _ = try await service.ingest(file: first, name: "a")
                try await service.foldPending()
                _ = try await service.keepSchedulersCurrent()
            }
            func plans(_ service: FetchCastService) async throws -> [[Prediction]] { try await Self.plans(service, devices: devices) }
            // Pages of two: each table as the device's own read finds it.
            let repository = await ModelRepository(modelStore: try PostgresModelStore.open(location))
            var after: String?
            repeat {
                let page = try await repository.planTablePage(after: after, limit: 2)
                seen.pages.append(page.tables.count)
                for (name, table) in page.tables {
                    var request = PredictionRequest()
                    request.device = name
                    request.at = 1_700_656_260
                    let read = try await repository.precomputedPlanKeeping(request)?.table
                    seen.sameAsRead.append(read.map {
                        ($0.device, $0.table, $0.since, $0.watermark, $0.epoch, $0.read) == (table.device, table.table, table.since, table.watermark, table.epoch, table.read)
                    } ?? false)
                }
                after = page.next
            } while after != nil
            let reader = try await FetchCastService(storage: storage, now: { 1_700_700_000 })
            seen.loaded = try await reader.preloadPlans()
            seen.again = try await reader.preloadPlans()
            seen.sqliteLoaded = try await sqlite.preloadPlans()
            seen.sqlite = try await plans(sqlite)
            seen.preloaded = try await plans(reader)
            seen.answered = reader.plansInMemory.answered
            // dev-1's new launch, ingested by the other process, not warmed yet.
            for service in [writer, sqlite] { _ = try await service.ingest(file: later, name: "b") }
            seen.sqliteAfter = try await plans(sqlite)
            seen.after = try await plans(reader)
            seen.answeredAfter = reader.plansInMemory.answered - seen.answered
            let late = try await FetchCastService(storage: storage, now: { 1_700_700_000 })
            seen.lateLoaded = try await late.preloadPlans()
            seen.late = try await plans(late)
            seen.lateAnswered = late.plansInMemory.answered
            return seen
        }()
        #expect(seen.pages == [2, 2, 1, 0] || seen.pages == [2, 2, 1], "\(seen.pages)")
        #expect(seen.sameAsRead == Array(repeating: true, count: 5))
        #expect(seen.loaded == 5 && seen.again == 0 && seen.sqliteLoaded == 0)
        #expect(seen.preloaded == seen.sqlite)
        #expect(seen.answered == 5, "every first plan from memory")
        #expect(seen.after == seen.sqliteAfter && seen.after[1] != seen.sqlite[1])
        #expect(seen.answeredAfter == 4, "dev-1's loaded table no longer answers")
        #expect(seen.lateLoaded == 4, "dev-1 has events after the last complete warm-up")
        #expect(seen.late == seen.sqliteAfter && seen.lateAnswered == 4)
    }

    /// A second service on the same database (another `serve` process) answers plans kept ahead
    /// (one device's, and a sweep's) from its memory after one shared check, and a plan it is
    /// asked after the first service's ingest returned includes those events: the same plans as
    /// an SQLite service's. Two names that only look alike, with histories of their own, keep
    /// tables of their own.
    /// An empty plan kept ahead is noted from what its table keeps of the device's model, word
    /// for word as SQLite's service notes it, on PostgreSQL from memory after the first read,
    /// at every start; after the device's new launch, from its new events. Two devices with
    /// three launches at no set time over three days: nothing is planned for them.
    @Test func emptyPlansFromMemoryAreNotedAsFromTheStore() async throws {
        let database = try await PostgresTestDatabase.create()
        defer { Task { await database.drop() } }
        let directory = try TemporaryDirectory()
        let devices = ["quiet-0", "quiet-1"]
        let last = 1_700_000_000 + 2 * 86_400 + 3_900
        var rows = ["time,device,app,event"]
        for device in devices {
            rows += ["\(1_700_000_000),\(device),mail,launch", "\(1_700_000_000 + 86_400 + 23_000),\(device),mail,launch", "\(last),\(device),mail,launch"]
        }
        let first = try directory.write("a.csv", rows.joined(separator: "\n") + "\n")
        let later = try directory.write("b.csv", "time,device,app,event\n\(last + 5 * 86_400),quiet-1,mail,launch\n")
        let url = database.url, sqlitePath = directory.path + "/s.sqlite"
        // An hour and ten days after the last launch; ten days again after quiet-1's new launch.
        let starts = [last + 3600, last + 10 * 86_400]
        struct Seen: Sendable {
            var sqlite: [String?] = [], postgres: [String?] = [], empty: [Bool] = []
            var noted = 0, sqliteNoted = 0, answered = 0, sqliteAfter: [String?] = [], after: [String?] = []
        }
        let seen = try await { () async throws -> Seen in
            var seen = Seen()
            let (writer, reader, sqlite) = try await Self.services(url: url, sqlitePath: sqlitePath, holding: first)
            func noted(_ service: FetchCastService, _ device: String, _ at: Int) async throws -> (Bool, String?) {
                let answer = try await service.planWithNote(PredictionRequest(device: device, at: Double(at)))
                return (answer.fetches.isEmpty, answer.note)
            }
            for _ in 0..<2 {
                for device in devices {
                    for at in starts {
                        let (empty, note) = try await noted(reader, device, at)
                        seen.empty.append(empty)
                        seen.postgres.append(note)
                        await seen.sqlite.append(try noted(sqlite, device, at).1)
                    }
                }
            }
            (seen.noted, seen.sqliteNoted) = (reader.notesFromTables, sqlite.notesFromTables)
            seen.answered = reader.plansInMemory.answered
            for service in [writer, sqlite] { _ = try await service.ingest(file: later, name: "b") }
            for device in devices {
                await seen.after.append(try noted(reader, device, starts[1]).1)
                await seen.sqliteAfter.append(try noted(sqlite, device, starts[1]).1)
            }
            return seen
        }()
        #expect(seen.empty == Array(repeating: true, count: 8))
        #expect(seen.postgres == seen.sqlite)
        #expect(seen.postgres[0] != seen.postgres[1] && seen.postgres[1]?.contains("silent for 10 days") == true, "\(seen.postgres)")
        #expect(seen.answered == 6, "all but each table's first plan from memory: \(seen.answered)")
        #expect(seen.noted == 8 && seen.sqliteNoted == 8, "every note from the tables: \(seen.noted), \(seen.sqliteNoted)")
        #expect(seen.after == seen.sqliteAfter)
        #expect(seen.after[0] == seen.postgres[1] && seen.after[1] != seen.postgres[3], "quiet-1's note is of its new launch: \(seen.after)")
    }

    @Test func plansInMemoryIncludeAnotherProcesssEventsOnceItsIngestReturned() async throws {
        let database = try await PostgresTestDatabase.create()
        defer { Task { await database.drop() } }
        let directory = try TemporaryDirectory()
        let devices = ["dev-0", "dev-1", "dev-2", "\u{E9}", "e\u{301}"]
        let first = try directory.write("a.csv", Self.trace(devices: devices) + "1700600000,e\u{301},news,launch\n")
        let later = try directory.write("b.csv", "time,device,app,event\n1700650000,dev-1,news,launch\n")
        let url = database.url, sqlitePath = directory.path + "/s.sqlite"
        struct Seen: Sendable {
            var sqlite: [[Prediction]] = [], fromStore: [[Prediction]] = [], fromMemory: [[Prediction]] = []
            var sqliteAfter: [[Prediction]] = [], after: [[Prediction]] = []
            var sqliteSweep: [Prediction] = [], sweep: [Prediction] = [], sqliteSweepAfter: [Prediction] = [], sweepAfter: [Prediction] = []
            var counts: [Int] = [], answeredAfter = 0, sweptFromMemory = 0, sqliteInMemory = 0
        }
        let seen = try await { () async throws -> Seen in
            var seen = Seen()
            let (writer, reader, sqlite) = try await Self.services(url: url, sqlitePath: sqlitePath, holding: first)
            func plans(_ service: FetchCastService) async throws -> [[Prediction]] { try await Self.plans(service, devices: devices) }
            func sweep(_ service: FetchCastService) async throws -> [Prediction] {
                let sweep = try await service.sweep(from: 1_700_656_260, to: 1_700_656_260 + 86_400, budget: PredictionRequest().budget, batchSize: 2)
                var all: [Prediction] = []
                while let batch = try await sweep.next() { all += batch }
                return all
            }
            seen.sqlite = try await plans(sqlite)
            seen.fromStore = try await plans(reader)
            seen.fromMemory = try await plans(reader)
            let counts = reader.plansInMemory
            seen.counts = [counts.tables, counts.answered]
            (seen.sqliteSweep, seen.sweep) = await (try sweep(sqlite), try sweep(reader))
            seen.sweptFromMemory = reader.plansInMemory.answered - counts.answered
            // dev-1 opened news after the tables were planned, ingested by the other process;
            // asked at once, before any fold or warm-up.
            for service in [writer, sqlite] { _ = try await service.ingest(file: later, name: "b") }
            seen.sqliteAfter = try await plans(sqlite)
            let before = reader.plansInMemory.answered
            seen.after = try await plans(reader)
            seen.answeredAfter = reader.plansInMemory.answered - before
            (seen.sqliteSweepAfter, seen.sweepAfter) = await (try sweep(sqlite), try sweep(reader))
            seen.sqliteInMemory = sqlite.plansInMemory.checks
            return seen
        }()
        #expect(seen.fromStore == seen.sqlite)
        #expect(seen.fromMemory == seen.sqlite)
        #expect(seen.sqlite[3] != seen.sqlite[4], "the two names that look alike have plans of their own")
        #expect(seen.counts == [5, 5], "the second round came from memory")
        #expect(!seen.sweep.isEmpty && seen.sweep == seen.sqliteSweep)
        #expect(seen.sweptFromMemory == 5)
        #expect(seen.after == seen.sqliteAfter)
        #expect(seen.after[1] != seen.sqlite[1], "dev-1's plan changed with its new launch")
        #expect(seen.answeredAfter == 4, "the other devices still from memory")
        #expect(seen.sweepAfter == seen.sqliteSweepAfter && seen.sweepAfter != seen.sweep)
        #expect(seen.sqliteInMemory == 0, "an SQLite service reads its file")
    }
}
