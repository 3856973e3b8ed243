import FetchCastCore
import FetchCastExport
import FetchCastPostgres
import FetchCastPredict
import FetchCastReplay
import FetchCastServe
import FetchCastStore
import FetchCastTestSupport
import Foundation
import Testing

/// The library's engine-neutral entry points, through ``StoreLocation``: what each answers from a
/// store of either engine is what the SQLite-only entry points answer from an SQLite store of the
/// same file, byte for byte.
@Suite("Store locations: the public entry points on every engine")
struct StoreLocationTests {
    /// Three devices' four weeks of habits, and a publish to every device.
    private static let trace = (["time,device,app,event,result,bytes,duration_ms"] + HabitTrace.rows(devices: ["d1", "d2", "d3"], days: 0..<28)
        + ["2023-11-20T07:00:00+01:00,,news,publish,,,"]).joined(separator: "\n") + "\n"

    /// Stores the trace through `location`'s event log and in a reference SQLite store through
    /// the SQLite-only API.
    private func stored(at location: StoreLocation, _ directory: TemporaryDirectory) async throws -> Store {
        let path = try directory.write("habits.csv", Self.trace)
        let log = try await location.openEventLog(create: true)
        let appended = try await log.append(path: path, name: "habits.csv", options: fixedOptions())
        await log.close()
        #expect(appended.status == .ingested && appended.events == 28 * 12 + 1)
        let reference = try Store(path: directory.path + "/reference.sqlite", create: true)
        _ = try Ingestor(store: reference, options: fixedOptions()).ingest(path: path, name: "habits.csv")
        return reference
    }

    private func location(_ under: LogUnderTest) throws -> StoreLocation {
        under.engine == .sqlite ? .sqlite(path: under.location) : try .postgres(url: under.location)
    }

    @Test(arguments: Engine.available)
    func theModelsTablesAndPlansAreTheSQLiteStoresOnes(_ engine: Engine) async throws {
        try await LogUnderTest.with(engine) { under, directory in
            let location = try location(under)
            let reference = try await stored(at: location, directory)
            // A week of plans from the last day on, and the model's tables.
            let requests = [
                ExportRequest(kind: .predictions, from: 1_699_833_600 + 27 * 86_400, to: 1_699_833_600 + 34 * 86_400),
                ExportRequest(kind: .model, device: "d2"),
                ExportRequest(kind: .cousage),
            ]
            for request in requests {
                var expected = ""
                let rows = try await Exporter.export(request, from: reference, to: &expected)
                var got = ""
                _ = try await Exporter.export(request, from: try await ModelRepository(location: location), to: &got)
                #expect(rows > 0, "\(request.kind)")
                #expect(got == expected, "\(request.kind) from \(location)")
            }
        }
    }

    @Test(arguments: Engine.available)
    func theEventsAndTheEvaluationAreTheSQLiteStoresOnes(_ engine: Engine) async throws {
        try await LogUnderTest.with(engine) { under, directory in
            let location = try location(under)
            let reference = try await stored(at: location, directory)
            let request = ExportRequest(kind: .events, device: "d1")
            var expected = ""
            _ = try await Exporter.export(request, from: reference, to: &expected)
            var got = ""
            let rows = try await Exporter.exportEvents(request, from: location, to: &got)
            #expect(rows == 28 * 4)  // d1's own: a publish to every device is the empty device's row
            #expect(got == expected)

            let options = EvaluationOptions(policies: ["hourly", "learned"], budgets: [6], threads: 1)
            let replayed = try await Evaluator.run(store: location, options: options)
            let referenceRun = try Evaluator.run(.store(reference), options: options)
            #expect(replayed.summary == referenceRun.summary)
            #expect(replayed.devices == referenceRun.devices)
            #expect(replayed.eventsReplayed == 28 * 12 + 1)
        }
    }

    @Test(arguments: Engine.available)
    func aTableAskedOfTheWrongSourceIsRefusedSayingWhereItIs(_ engine: Engine) async throws {
        try await LogUnderTest.with(engine) { under, directory in
            let location = try location(under)
            _ = try await stored(at: location, directory)
            var out = ""
            let fromLog = await #expect(throws: (any Error).self) {
                try await Exporter.exportEvents(ExportRequest(kind: .model), from: location, to: &out)
            }
            #expect("\(fromLog!)".contains("made by the model: export it from a ModelRepository"))
            let fromModel = await #expect(throws: (any Error).self) {
                var out = ""
                _ = try await Exporter.export(ExportRequest(kind: .events), from: try await ModelRepository(location: location), to: &out)
            }
            #expect("\(fromModel!)".contains("read from the event log, not from the model"))
            #expect(out.isEmpty)
        }
    }

    /// A service of a PostgreSQL location spools request bodies in a directory of its own (several
    /// servers of one database may share a machine), made with the application and removed when
    /// it is released; one of an SQLite location spools beside its file, as `ServeConfiguration(databasePath:)`.
    @Test(arguments: Engine.available)
    func aServiceSpoolsBesideItsFileOrInADirectoryOfItsOwn(_ engine: Engine) async throws {
        try await LogUnderTest.with(engine) { under, directory in
            let location = try location(under)
            _ = try await stored(at: location, directory)
            let base = directory.path + "/tmp"
            try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: false)
            var configuration = ServeConfiguration(store: location)
            #expect(configuration.databasePath == "\(location)")
            if engine == .sqlite {
                #expect(configuration.spoolDirectory == directory.path)
                #expect(configuration.readThreads == ServeConfiguration(databasePath: under.location).readThreads)
                return
            }
            configuration.spoolDirectory = base
            let spools = { @Sendable in try FileManager.default.contentsOfDirectory(atPath: base).filter { $0.hasPrefix("fetchcast-spool-") } }
            let during: [String]
            do {
                let app = try await buildApplication(configuration: configuration).application
                during = try spools()
                withExtendedLifetime(app) {}
            }
            let after = try spools()
            #expect(during.count == 1)
            #expect(after.isEmpty, "\(after)")
        }
    }

    /// A planner answers from any task, many at once, each device's plan (and an empty plan's
    /// note) as a repository of the SQLite-only API answers it from an SQLite store of the same
    /// file; a store that does not exist is an error and is not created.
    @Test(.timeLimit(.minutes(2)), arguments: Engine.available)
    func aPlannerAnswersFromTasksWhatTheRepositoryAnswers(_ engine: Engine) async throws {
        try await LogUnderTest.with(engine) { under, directory in
            let location = try location(under)
            await #expect(throws: StoreError.self) { _ = try await Planner(location: location) }
            let reference = try await stored(at: location, directory)
            let planner = try await Planner(location: location)
            // The last day's evening, the next morning and, silent for a week, nothing.
            let starts = [27.8, 28.3, 35.0].map { 1_699_833_600 + $0 * 86_400 }
            let requests = ["d1", "d2", "d3"].flatMap { device in starts.map { PredictionRequest(device: device, at: $0) } }
            let repository = ModelRepository(store: reference)
            repository.savesFolds = false
            let snapshot = try await repository.refresh()
            var expected: [[Prediction]] = []
            for request in requests { expected.append(try await Predictor.predict(request, snapshot: snapshot)) }
            // Every request from eight tasks at once: 72 plans on the 2-core pool.
            let answers = try await withThrowingTaskGroup(of: (Int, [Prediction]).self) { group in
                for i in 0..<(8 * requests.count) {
                    group.addTask { (i % requests.count, try await planner.plan(requests[i % requests.count])) }
                }
                return try await group.reduce(into: [:]) { $0[$1.0, default: []].append($1.1) }
            }
            for (i, plans) in answers {
                #expect(plans.count == 8 && plans.allSatisfy { $0 == expected[i] }, "\(requests[i])")
            }
            #expect(expected.contains { !$0.isEmpty } && expected.contains { $0.isEmpty })
            let silent = try await planner.planWithNote(requests[2])
            #expect(silent.fetches.isEmpty && silent.note?.contains("the device has been silent for") == true, "\(silent)")
            await #expect(throws: ServiceError.unknownDevice("d9")) { _ = try await planner.plan(PredictionRequest(device: "d9", at: starts[0])) }
            await planner.shutdown()
        }
        let directory = try TemporaryDirectory()
        await #expect(throws: StoreError.self) { _ = try await Planner(location: .sqlite(path: directory.path + "/missing.sqlite")) }
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/missing.sqlite"))
    }

    @Test func aMissingSQLiteStoreIsAnErrorNotANewStore() async throws {
        let directory = try TemporaryDirectory()
        let missing = StoreLocation.sqlite(path: directory.path + "/missing.sqlite")
        await #expect(throws: StoreError.self) { _ = try await ModelRepository(location: missing) }
        await #expect(throws: StoreError.self) { _ = try await missing.openEventLog() }
        await #expect(throws: EvaluationError.self) { _ = try await Evaluator.run(store: missing, options: EvaluationOptions()) }
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/missing.sqlite"))
        #expect("\(missing)" == directory.path + "/missing.sqlite")
    }

    @Test func aPostgresLocationIsNamedWithoutItsPassword() throws {
        let location = try StoreLocation.postgres(url: "postgres://fc:s3cret@db.example:5433/fleet", environment: [:])
        #expect("\(location)" == "postgres://fc@db.example:5433/fleet")
        #expect(throws: StoreError.self) { _ = try StoreLocation.postgres(url: "mysql://fc@db/fleet", environment: [:]) }
    }
}
