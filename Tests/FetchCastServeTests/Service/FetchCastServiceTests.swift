import FetchCastStore
import FetchCastTrace
import Foundation
import Testing
@testable import FetchCastPredict
@testable import FetchCastServe

/// The transport-free service: the same answers as `ingest` and `predict`.
struct FetchCastServiceTests {
    /// A fresh directory with a store path, removed when released.
    final class Fixture {
        let directory: String
        var path: String { directory + "/service.sqlite" }

        init() throws {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("fetchcast-service-tests-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            directory = url.path
        }

        deinit { try? FileManager.default.removeItem(atPath: directory) }

        /// Writes a trace: each device opens mail at 08:00, chat at 08:10 and news at 12:30
        /// (UTC) every day for 10 days.
        func trace(_ name: String, devices: [String]) throws -> String {
            var rows = ["time,device,app,event"]
            for day in 0..<10 {
                for d in devices {
                    let t = 1_699_833_600 + day * 86_400
                    rows.append("\(t + 8 * 3600),\(d),mail,launch")
                    rows.append("\(t + 8 * 3600 + 600),\(d),chat,launch")
                    rows.append("\(t + 12 * 3600 + 1800),\(d),news,launch")
                }
            }
            let file = directory + "/" + name
            try (rows.joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
            return file
        }
    }

    /// One second after the last day's mail launch: a plan then reacts to it.
    static let now = 1_700_640_001.0
    /// Where the plans' blocking parts run, as the library runs them in process.
    let work = InlineWork()

    @Test func ingestIsOneFileKeyedBySHA256AndDuplicatesAddNothing() async throws {
        let f = try Fixture()
        let service = try await FetchCastService(path: f.path, now: { Self.now })
        let file = try f.trace("a.csv", devices: ["d1", "d2"])
        let first = try await service.ingest(file: file, name: "batch 1")
        #expect(first == .init(events: 60, duplicate: false, duplicates: 0, file: try RawInput.sha256(ofFile: file)))
        let again = try await service.ingest(file: file, name: "batch 1 again")
        #expect(again.duplicate && again.events == 0 && again.file == first.file)
        #expect(try Store(path: f.path, create: false).files().map(\.name) == ["batch 1"])
    }

    @Test func badInputNamesTheBatchAndStoresNothing() async throws {
        let f = try Fixture()
        let service = try await FetchCastService(path: f.path)
        let file = f.directory + "/bad.csv"
        try "time,device,app,event\n1700000000,d1,mail,jump\n".write(toFile: file, atomically: true, encoding: .utf8)
        await #expect(throws: TraceError.self) { try await service.ingest(file: file, name: "POST body") }
        do {
            _ = try await service.ingest(file: file, name: "POST body")
        } catch let error as TraceError {
            #expect(error.file == "POST body" && error.line == 2)
        }
        #expect(try Store(path: f.path, create: false).files().isEmpty)
    }

    @Test func aPlanIsWhatPredictAnswersAndStartsAtTheClockByDefault() async throws {
        let f = try Fixture()
        let service = try await FetchCastService(path: f.path, now: { Self.now })
        _ = try await service.ingest(file: try f.trace("a.csv", devices: ["d1", "d2"]), name: "a")
        try await service.foldPending()
        let served = try await service.plan(PredictionRequest(device: "d1", count: 4), on: work)
        #expect(!served.isEmpty && served.count <= 4)
        #expect(served.allSatisfy { $0.fetchAtUnix >= Self.now })
        let store = try Store(path: f.path, create: false)
        let expected = try await Predictor.predict(
            PredictionRequest(device: "d1", at: Self.now, count: 4), snapshot: ModelRepository(store: store).refresh(devices: ["d1"]))
        #expect(served == expected)
    }

    /// The plan with its note (what `GET /v1/devices/{device}/plan` answers) is the plan, and
    /// an empty one says why in `predict`'s words, from the same read of the store.
    @Test func anEmptyPlanComesWithItsNoteInOneAnswer() async throws {
        let f = try Fixture()
        let service = try await FetchCastService(path: f.path, now: { Self.now })
        _ = try await service.ingest(file: try f.trace("a.csv", devices: ["d1"]), name: "a")
        try await service.foldPending()
        let request = PredictionRequest(device: "d1", count: 4)
        let answered = try await service.planWithNote(request, on: work)
        #expect(answered.fetches == (try await service.plan(request, on: work)) && !answered.fetches.isEmpty)
        #expect(answered.note == nil)
        // Thirty days after the clock: silent for longer than plans last.
        let later = Self.now + 30 * 86_400
        let silent = try await service.planWithNote(PredictionRequest(device: "d1", at: later), on: work)
        #expect(silent.fetches.isEmpty)
        let store = try Store(path: f.path, create: false)
        let model = try await #require(try ModelRepository(store: store).refresh(devices: ["d1"]).models.values.first)
        let last = try #require(model.lastEventTime)
        #expect(silent.note == EmptyPlanNote.sentence(
            device: "d1", horizonHours: 24, lastEvent: (last, model.configuration.tau), from: later, budget: 24))
        #expect(silent.note?.contains("the device has been silent for") == true, "\(String(describing: silent.note))")
    }

    /// A plan asked at a time inside the device's history is made from the events before it,
    /// and so is its note: a device silent for nine days at `at`, with a launch twenty days
    /// later, is "silent for 9 days", not described by its later launch.
    @Test func anEmptyPlanInsideTheHistoryIsNotedFromTheEventsBeforeIt() async throws {
        let f = try Fixture()
        let service = try await FetchCastService(path: f.path, now: { Self.now + 30 * 86_400 })
        _ = try await service.ingest(file: try f.trace("a.csv", devices: ["d1"]), name: "a")
        let back = f.directory + "/back.csv"
        try "time,device,app,event\n\(Int(Self.now) + 30 * 86_400),d1,mail,launch\n".write(toFile: back, atomically: true, encoding: .utf8)
        _ = try await service.ingest(file: back, name: "back")
        try await service.foldPending()
        let at = Self.now + 9 * 86_400
        let answered = try await service.planWithNote(PredictionRequest(device: "d1", at: at), on: work)
        #expect(answered.fetches.isEmpty)
        // The last event before `at`: day 9's news at 12:30.
        let lastBefore: Double = 1_699_833_600 + 9 * 86_400 + 12 * 3600 + 1800
        let expected = EmptyPlanNote.sentence(device: "d1", horizonHours: 24, lastEvent: (lastBefore, 1800), from: at, budget: 24)
        #expect(answered.note == expected)
        #expect(answered.note?.contains("the device has been silent for 8 days (no event since 2023-11-22T12:30:00Z)") == true,
                "\(String(describing: answered.note))")
    }

    @Test func unknownDevicesAndAppsAreTyped() async throws {
        let f = try Fixture()
        let service = try await FetchCastService(path: f.path, now: { Self.now })
        _ = try await service.ingest(file: try f.trace("a.csv", devices: ["d1"]), name: "a")
        await #expect(throws: ServiceError.unknownDevice("nobody")) { try await service.plan(PredictionRequest(device: "nobody"), on: work) }
        await #expect(throws: ServiceError.unknownApp("video")) { try await service.plan(PredictionRequest(device: "d1", app: "video"), on: work) }
        await #expect(throws: ServiceError.unknownDevice("nobody")) { try await service.model(device: "nobody", app: nil) }
    }

    @Test func theSweepInSmallBatchesIsPredictForEveryDeviceInTheWindow() async throws {
        let f = try Fixture()
        // The last batch holds two ids that only look alike ("é" decomposed and precomposed).
        let devices = (0..<7).map { "dev-\($0)" } + ["e\u{301}", "\u{E9}"]
        let service = try await FetchCastService(path: f.path, now: { Self.now })
        _ = try await service.ingest(file: try f.trace("a.csv", devices: devices), name: "a")
        let from = Self.now, to = Self.now + 43_200
        let sweep = try await service.sweep(from: from, to: to, budget: 12, batchSize: 3)
        var swept: [Prediction] = []
        var batches = 0
        while let batch = try await sweep.next(on: work) {
            swept += batch
            batches += 1
        }
        #expect(batches == 3)
        let store = try Store(path: f.path, create: false)
        var expected: [Prediction] = []
        try await ModelRepository(store: store).forEachBatch(device: nil) { snapshot in
            await expected += try Predictor.predict(PredictionRequest(at: from, count: .max, budget: 12), snapshot: snapshot)
        }
        expected = expected.filter { $0.fetchAtUnix < to }
        #expect(!swept.isEmpty)
        #expect(Set(swept.map { Array($0.device.utf8) }) == Set(devices.map { Array($0.utf8) }))
        #expect(swept == expected)
    }

    /// After the warm-up, a sweep answers devices from their plans kept ahead, the devices with
    /// events since from their schedulers, and both exactly as `predict` does; ids that only look
    /// alike ("é" precomposed and decomposed) are two devices.
    @Test func aWarmedSweepAnswersAheadWhereItCanAndAsPredictEverywhere() async throws {
        let f = try Fixture()
        let devices = ["dev-0", "dev-1", "dev-2", "dev-3", "\u{E9}", "e\u{301}"]
        let service = try await FetchCastService(path: f.path, now: { Self.now })
        // Nine days of the fixture's habits, then day 9's mail launch at 08:00 (`now` − 1 s).
        let first = try f.trace("a.csv", devices: devices)
        let rows = try String(contentsOfFile: first, encoding: .utf8).split(separator: "\n").filter { $0.hasPrefix("time") || $0.prefix(10) < "1700640000" }
        try ((rows + devices.map { "1700640000,\($0),mail,launch" }).joined(separator: "\n") + "\n")
            .write(toFile: first, atomically: true, encoding: .utf8)
        _ = try await service.ingest(file: first, name: "a")
        try await service.foldPending()
        await #expect(try service.keepSchedulersCurrent().complete)
        // Two devices opened news a while before, posted after the pass: their plans are made again.
        let later = f.directory + "/b.csv"
        try "time,device,app,event\n1700639400,dev-1,news,launch\n1700639400,e\u{301},news,launch\n".write(toFile: later, atomically: true, encoding: .utf8)
        _ = try await service.ingest(file: later, name: "b")
        // Half a second after the mail launch: the plans react to it (chat follows mail).
        let from = 1_700_640_000.5, to = from + 86_400
        let sweep = try await service.sweep(from: from, to: to, budget: 24, batchSize: 4)
        var swept: [Prediction] = []
        while let batch = try await sweep.next(on: work) { swept += batch }
        #expect(service.plansAnsweredAhead == 4, "dev-0, dev-2, dev-3 and é answered ahead; dev-1 and e◌́ not")
        let store = try Store(path: f.path, create: false)
        var expected: [Prediction] = []
        try await ModelRepository(store: store).forEachBatch(device: nil) { snapshot in
            await expected += try Predictor.predict(PredictionRequest(at: from, count: .max, budget: 24), snapshot: snapshot)
        }
        expected = expected.filter { $0.fetchAtUnix < to }
        #expect(Set(swept.map { Array($0.device.utf8) }).count == 6, "every device, the two é apart")
        #expect(swept == expected)
    }

    @Test func devicesArePagedInIdOrder() async throws {
        let f = try Fixture()
        let service = try await FetchCastService(path: f.path)
        _ = try await service.ingest(file: try f.trace("a.csv", devices: ["b", "a'quote", "c/slash"]), name: "a")
        await #expect(try service.devices(after: nil, limit: 2).map(\.device) == ["a'quote", "b"])
        await #expect(try service.devices(after: "b", limit: 2).map(\.device) == ["c/slash"])
        await #expect(try service.devices(after: nil, limit: 5).allSatisfy { $0.events == 30 && $0.firstMicros < $0.lastMicros })
    }
}
