import FetchCastCore
import FetchCastModel
@testable import FetchCastStore  // the store's connection, to simulate a full disk
import FetchCastTrace
import Foundation
import Testing
import FetchCastTestSupport
@testable import FetchCastPredict

/// A fresh store in a temporary directory with helpers to add trace text.
private final class RepositoryFixture {
    private let temporary: TemporaryStore
    var directory: String { temporary.directory }
    let store: Store
    private var files = 0

    init() throws {
        temporary = try TemporaryStore()
        store = try temporary.open()
    }

    @discardableResult
    func ingest(_ rows: [String]) throws -> String {
        files += 1
        let file = directory + "/trace-\(files).csv"
        try Data((["time,device,app,event,result,bytes,duration_ms"] + rows).joined(separator: "\n").utf8)
            .write(to: URL(fileURLWithPath: file))
        _ = try Ingestor(store: store, options: .init(now: { 1_700_000_000 })).ingest(path: file)
        return file
    }
}

/// Two weeks of habits for two devices: mail at 08:00 and 20:00, news at 12:30, chat after mail.
private func habits(days: Range<Int>, devices: [String] = ["a", "b"]) -> [String] {
    var rows: [String] = []
    for day in days {
        let date = Timestamp.format(micros: Int64(1_699_833_600 + day * 86_400) * 1_000_000, utcOffsetSeconds: 3600).prefix(10)
        for d in devices {
            rows.append("\(date)T08:0\(day % 7):00+01:00,\(d),mail,launch,,,")
            rows.append("\(date)T08:1\(day % 7):00+01:00,\(d),chat,launch,,,")
            rows.append("\(date)T12:3\(day % 7):00+01:00,\(d),news,launch,,,")
            rows.append("\(date)T20:0\(day % 7):00+01:00,\(d),mail,launch,,,")
        }
    }
    return rows.sorted()
}

struct ModelRepositoryTests {
    /// A full disk, simulated deterministically: SQLite refuses to grow the store past its
    /// current size on this connection (`PRAGMA max_page_count`), as it does on a full disk
    /// (`SQLITE_FULL`, "database or disk is full"); root ignores file permissions, this it cannot.
    @Test func answersFromMemoryWhenTheFoldCannotBeSaved() async throws {
        let full = try RepositoryFixture()
        try full.ingest(habits(days: 0..<14))
        let roomy = try RepositoryFixture()
        try roomy.ingest(habits(days: 0..<14))
        let c = full.store.connection
        try c.execute("PRAGMA max_page_count = \(try c.scalarInt("PRAGMA page_count"))")

        let repository = ModelRepository(store: full.store)
        let unsaved = try await repository.refresh(devices: ["a"])
        let failure = try #require(repository.saveFailure)
        #expect(failure.isWriteFailure)
        #expect(failure.code.map { $0 & 0xff } == 13, "SQLITE_FULL")
        #expect(failure.description.contains("database or disk is full"), "\(failure)")
        #expect(try c.scalarInt("SELECT count(*) FROM model_state") == 0, "nothing half-saved")

        let saved = try await ModelRepository(store: roomy.store).refresh(devices: ["a"])
        #expect(unsaved.eventsFolded == saved.eventsFolded)
        #expect(unsaved.eventsFolded == 14 * 2 * 4)
        let at = Timestamp.parseArgument("2023-11-26T08:06:01+01:00")!
        let request = PredictionRequest(device: "a", at: at, count: 20, budget: 6)
        let expected = try await Predictor.predict(request, snapshot: saved)
        #expect(!expected.isEmpty)
        #expect(try await Predictor.predict(request, snapshot: unsaved) == expected, "the same answer, saved or not")
        // Its prior came from the other device, as when saved.
        #expect(unsaved.prior(for: try #require(unsaved.device(named: "a"))).binaryEncoded()
                == saved.prior(for: try #require(saved.device(named: "a"))).binaryEncoded())

        // With room again, the next call saves.
        try c.execute("PRAGMA max_page_count = 1073741823")
        let later = ModelRepository(store: full.store)
        #expect(try await Predictor.predict(request, snapshot: try later.refresh(devices: ["a"])) == expected)
        #expect(later.saveFailure == nil)
        #expect(try c.scalarInt("SELECT count(*) FROM model_state") > 0)
    }

    /// "é" precomposed and decomposed are different ids in the store; `String ==` equates them.
    @Test func keepsCanonicallyEquivalentDeviceIdsApart() async throws {
        let (composed, decomposed) = ("d\u{E9}", "de\u{301}")
        let f = try RepositoryFixture()
        try f.ingest(habits(days: 0..<14, devices: [composed, decomposed, "x"]))
        let repository = ModelRepository(store: f.store)
        let snapshot = try await repository.refresh(devices: [decomposed])
        let id = try #require(snapshot.device(named: decomposed))
        #expect(snapshot.deviceNames[id].map { Array($0.utf8) } == Array(decomposed.utf8))
        #expect(snapshot.device(named: composed) != id)
        var devices: [[UInt8]] = []
        try await repository.forEachBatch(device: nil, batchSize: 1) { snapshot in
            let request = PredictionRequest(at: Timestamp.parseArgument("2023-11-26T08:06:01+01:00")!, count: 1, budget: 6)
            await devices += try Predictor.predict(request, snapshot: snapshot).map { Array($0.device.utf8) }
        }
        // Every device once, in byte order: "de\u{301}" (0x65) before "d\u{E9}" (0xC3).
        #expect(devices == [Array(decomposed.utf8), Array(composed.utf8), Array("x".utf8)])
    }

    @Test func answersForEveryDeviceFromMemoryWhenTheFoldCannotBeSaved() async throws {
        let full = try RepositoryFixture()
        try full.ingest(habits(days: 0..<14, devices: ["a", "b", "c"]))
        let roomy = try RepositoryFixture()
        try roomy.ingest(habits(days: 0..<14, devices: ["a", "b", "c"]))
        let c = full.store.connection
        try c.execute("PRAGMA max_page_count = \(try c.scalarInt("PRAGMA page_count"))")
        let at = Timestamp.parseArgument("2023-11-26T08:06:01+01:00")!
        let request = PredictionRequest(at: at, count: 5, budget: 6)
        func everyDevice(_ store: Store) async throws -> ([Prediction], StoreError?) {
            let repository = ModelRepository(store: store)
            var all: [Prediction] = []
            var failure: StoreError?
            try await repository.forEachBatch(device: nil, batchSize: 2) { snapshot in
                await all += try Predictor.predict(request, snapshot: snapshot)
                failure = failure ?? repository.saveFailure
            }
            return (all, failure)
        }
        let (unsaved, failure) = try await everyDevice(full.store)
        let (saved, none) = try await everyDevice(roomy.store)
        #expect(failure != nil)
        #expect(none == nil)
        #expect(Set(saved.map(\.device)) == ["a", "b", "c"])
        #expect(unsaved == saved)
    }

    @Test func predictAnswersRightAfterIngestWithoutATrainingStep() async throws {
        let f = try RepositoryFixture()
        try f.ingest(habits(days: 0..<14))
        let snapshot = try await ModelRepository(store: f.store).refresh()
        #expect(snapshot.eventsFolded == 14 * 2 * 4)
        let at = Timestamp.parseArgument("2023-11-26T08:06:01+01:00")!
        let predictions = try await Predictor.predict(PredictionRequest(device: "a", at: at, count: 20, budget: 6), snapshot: snapshot)
        #expect(!predictions.isEmpty)
        #expect(predictions.allSatisfy { $0.device == "a" && $0.fetchAtUnix >= at })
        #expect(predictions.allSatisfy { (0...1).contains($0.launchProbability) && (0...1).contains($0.newDataProbability) })
        #expect(predictions.allSatisfy { $0.fetchAt.hasSuffix("+01:00") }, "fetch_at in the device's local offset")
        // A 24-hour plan from 08:06 spans two local days: at most 6 on each.
        let perDay = Dictionary(grouping: predictions) { $0.fetchAt.prefix(10) }
        #expect(perDay.values.allSatisfy { $0.count <= 6 }, "a budget of 6 a local day: \(perDay.mapValues(\.count))")
        // One second after the day's mail launch: chat, opened ten minutes after mail every
        // morning, is fetched at once.
        #expect(predictions.contains { $0.app == "chat" && $0.fetchAtUnix == at }, "\(predictions)")
    }

    @Test func batchesOfDevicesGiveTheSamePredictionsAndExportsAsOneSnapshot() async throws {
        let f = try RepositoryFixture()
        try f.ingest(habits(days: 0..<10, devices: ["c", "a", "d", "b", "e"]))
        let repository = ModelRepository(store: f.store)
        let at = Timestamp.parseArgument("2023-11-22T08:02:01+01:00")!
        let request = PredictionRequest(at: at, count: 5, budget: 6)
        // Before any fold: the batches fold first, then read.
        var seen: [[String]] = []
        var batched: [Prediction] = []
        try await repository.forEachBatch(device: nil, batchSize: 2) { snapshot in
            seen.append(snapshot.models.keys.compactMap { snapshot.deviceNames[$0] }.sorted())
            await batched += try Predictor.predict(request, snapshot: snapshot)
        }
        #expect(seen == [["a", "b"], ["c", "d"], ["e"]])
        let whole = try await Predictor.predict(request, snapshot: repository.refresh())
        #expect(batched == whole)
        #expect(Set(batched.map(\.device)) == ["a", "b", "c", "d", "e"])
        // One named device: one snapshot with it alone.
        var single: [[String]] = []
        try await repository.forEachBatch(device: "d", batchSize: 2) { snapshot in
            single.append(snapshot.models.keys.compactMap { snapshot.deviceNames[$0] })
        }
        #expect(single == [["d"]])
    }

    @Test func notBeforeDelaysThePlanLikeEarliestBeginDate() async throws {
        let f = try RepositoryFixture()
        try f.ingest(habits(days: 0..<14))
        let snapshot = try await ModelRepository(store: f.store).refresh()
        let at = Timestamp.parseArgument("2023-11-26T08:06:01+01:00")!
        // Ten minutes later: the looks before it move to it, nothing is planned before it.
        let notBefore = at + 600
        let predictions = try await Predictor.predict(
            PredictionRequest(device: "a", at: at, notBefore: notBefore, count: 50, budget: 6), snapshot: snapshot)
        #expect(!predictions.isEmpty)
        #expect(predictions.allSatisfy { $0.fetchAtUnix >= notBefore && $0.fetchAtUnix < notBefore + 86_400 })
        #expect(predictions.first?.fetchAtUnix == notBefore, "\(predictions)")
        // A not-before earlier than --at changes nothing.
        let early = try await Predictor.predict(
            PredictionRequest(device: "a", at: at, notBefore: at - 3600, count: 50, budget: 6), snapshot: snapshot)
        let plain = try await Predictor.predict(PredictionRequest(device: "a", at: at, count: 50, budget: 6), snapshot: snapshot)
        #expect(early.map(\.fetchAtUnix) == plain.map(\.fetchAtUnix))
    }

    @Test func foldsOnlyNewEventsAndMatchesAFoldFromScratch() async throws {
        let incremental = try RepositoryFixture()
        try incremental.ingest(habits(days: 0..<7))
        #expect(try await ModelRepository(store: incremental.store).refresh().eventsFolded == 56)
        #expect(try await ModelRepository(store: incremental.store).refresh().eventsFolded == 0, "nothing new: nothing folded")
        try incremental.ingest(habits(days: 7..<14))
        let later = try await ModelRepository(store: incremental.store).refresh()
        #expect(later.eventsFolded == 56)

        let scratch = try RepositoryFixture()
        try scratch.ingest(habits(days: 0..<7))
        try scratch.ingest(habits(days: 7..<14))
        let whole = try await ModelRepository(store: scratch.store).refresh()
        #expect(whole.eventsFolded == 112)
        for id in whole.models.keys {
            #expect(try whole.models[id]!.binaryEncoded() == later.models[id]!.binaryEncoded())
            #expect(whole.prior(for: id).binaryEncoded() == later.prior(for: id).binaryEncoded())
        }
    }

    @Test func aDevicesPriorIsBuiltFromTheOtherDevicesOnly() async throws {
        let f = try RepositoryFixture()
        // b has habits of its own (games at night, news in the evening) that a must not see in
        // a prior of its own habits.
        var rows = habits(days: 0..<14)
        for day in 0..<14 {
            let date = Timestamp.format(micros: Int64(1_699_833_600 + day * 86_400) * 1_000_000, utcOffsetSeconds: 3600).prefix(10)
            rows.append("\(date)T22:1\(day % 7):00+01:00,b,games,launch,,,")
            rows.append("\(date)T18:4\(day % 7):00+01:00,b,news,launch,,,")
            rows.append("\(date)T18:5\(day % 7):00+01:00,b,chat,launch,,,")
        }
        try f.ingest(rows.sorted())
        let snapshot = try await ModelRepository(store: f.store).refresh()
        let a = try #require(snapshot.device(named: "a")), b = try #require(snapshot.device(named: "b"))
        let name: (Int32) -> String = { snapshot.appNames[Int64($0)] ?? "" }
        for (device, other) in [(a, b), (b, a)] {
            let model = try #require(snapshot.models[device])
            var apps: [Int32: String] = [:]
            for id in model.appsBySessions { apps[id] = name(id) }
            let othersOnly = DevicePrior(PopulationPrior.build(from: [(model: snapshot.models[other]!, name: name)]), apps: apps)
            let everyone = DevicePrior(PopulationPrior.build(from: [a, b].map { (model: snapshot.models[$0]!, name: name) }), apps: apps)
            // Exactly equal (the pooled sums are exact, see `PopulationSums`), so well within any tolerance.
            #expect(snapshot.prior(for: device).binaryEncoded() == othersOnly.binaryEncoded())
            #expect(snapshot.prior(for: device).binaryEncoded() != everyone.binaryEncoded())
        }
        // What `predict` reads back from the store is the same prior.
        let reread = try await ModelRepository(store: f.store).refresh(devices: ["a"])
        #expect(reread.eventsFolded == 0)
        #expect(reread.prior(for: a).binaryEncoded() == snapshot.prior(for: a).binaryEncoded())
    }

    @Test func foldingATinyBatchAtATimeChangesNoByte() async throws {
        // Five devices, publishes to every device before and between them, a device that
        // appears late, and a second ingest folded incrementally.
        var rows = habits(days: 0..<10, devices: ["a", "b", "c", "d"])
        for day in 0..<10 {
            let date = Timestamp.format(micros: Int64(1_699_833_600 + day * 86_400) * 1_000_000, utcOffsetSeconds: 3600).prefix(10)
            for hour in ["09", "15", "21"] { rows.append("\(date)T\(hour):00:00+01:00,,news,publish,,,") }
        }
        var states: [[Store.ModelStateRecord]] = []
        for batchSize in [1, 2, 256] {
            let f = try RepositoryFixture()
            try f.ingest(rows.sorted())
            let repository = ModelRepository(store: f.store)
            repository.foldBatchSize = batchSize
            let first = try await repository.refresh(devices: ["b"])
            #expect(first.eventsFolded == rows.count)
            #expect(first.models.count == 1)
            try f.ingest(habits(days: 10..<12, devices: ["c", "late"]))
            let second = try await repository.refresh()
            #expect(second.eventsFolded == 2 * 2 * 4)
            #expect(second.models.count == 5)
            states.append(try f.store.modelStates(prefix: ""))
        }
        #expect(
            states[0].count == 17,
            "5 + 3 + 5 + 2 + 2: a model a device, the population, what every device saw, the watermark, a prior a device, the prior epoch and its sums, the epoch's models of the two devices the second ingest changed")
        #expect(states[0] == states[1])
        #expect(states[0] == states[2])
    }

    @Test func aLoneDeviceGetsTheGenericPrior() async throws {
        let f = try RepositoryFixture()
        try f.ingest(habits(days: 0..<7, devices: ["a"]))
        let snapshot = try await ModelRepository(store: f.store).refresh()
        let a = try #require(snapshot.device(named: "a"))
        #expect(snapshot.prior(for: a).binaryEncoded() == DevicePrior.none.binaryEncoded())
        #expect(try await ModelRepository(store: f.store).refresh(devices: ["a"]).prior(for: a).binaryEncoded() == DevicePrior.none.binaryEncoded())
    }

    @Test func forgettingAFileRebuildsTheModel() async throws {
        let f = try RepositoryFixture()
        let first = try f.ingest(habits(days: 0..<7))
        try f.ingest(habits(days: 7..<14, devices: ["c"]))
        _ = try await ModelRepository(store: f.store).refresh()
        _ = try f.store.forget(first)
        let after = try await ModelRepository(store: f.store).refresh()
        #expect(after.eventsFolded == 28)
        #expect(after.models.count == 1)
        #expect(after.device(named: "c").flatMap { after.models[$0] } != nil)
    }

    @Test func contentPublishedBeforeADeviceAppearsIsKept() async throws {
        let f = try RepositoryFixture()
        var publishes: [String] = []
        for day in 0..<7 {
            let date = Timestamp.format(micros: Int64(1_699_833_600 + day * 86_400) * 1_000_000, utcOffsetSeconds: 3600).prefix(10)
            for hour in 10..<20 { publishes.append("\(date)T\(hour):00:00+01:00,,news,publish,,,") }
        }
        try f.ingest(publishes)
        try f.ingest(habits(days: 7..<10))
        let snapshot = try await ModelRepository(store: f.store).refresh()
        let news = Int32(snapshot.app(named: "news")!)
        let model = snapshot.models[snapshot.device(named: "a")!]!
        let rates = try #require(model.contentRates(app: news, now: model.lastEventTime!))
        #expect(rates[10 + 24] > 10 * rates[3 + 24], "busy at 10:00, quiet at 03:00")
    }

    @Test func damagedStateIsRebuiltFromTheEvents() async throws {
        let f = try RepositoryFixture()
        try f.ingest(habits(days: 0..<7))
        let first = try await ModelRepository(store: f.store).refresh()
        try f.store.saveModelStates([Store.ModelStateRecord(key: "device:1", watermark: 56, state: [1, 2, 3])])
        let again = try await ModelRepository(store: f.store).refresh()
        #expect(again.eventsFolded == 56)
        for id in first.models.keys {
            #expect(try first.models[id]!.binaryEncoded() == again.models[id]!.binaryEncoded())
        }
    }

    @Test func aNewDeviceGetsThePopulationsHabitsOnDayOne() async throws {
        let f = try RepositoryFixture()
        try f.ingest(habits(days: 0..<14))
        try f.ingest(["2023-11-27T08:00:00+01:00,newcomer,mail,launch,,,"])
        let snapshot = try await ModelRepository(store: f.store).refresh()
        let at = Timestamp.parseArgument("2023-11-27T08:00:01+01:00")!
        var request = PredictionRequest(device: "newcomer", at: at, count: 3, budget: 3)
        request.apps = ["mail", "chat", "news"]
        let plan = try await Predictor.predict(request, snapshot: snapshot)
        // The other devices are busy at 08:00–09:00 on weekdays: when the newcomer's mail goes
        // stale, half an hour after its first launch, it is fetched (with the other apps joining
        // the wakeup), and every reason says whose habit it rests on.
        let first = try #require(plan.first, "nothing planned")
        #expect(first.app == "mail" && first.fetchAtUnix == at - 1 + 1800, "\(plan)")
        #expect(plan.allSatisfy { $0.reason.hasPrefix("devices like newcomer ") && $0.reason.contains("from other devices: newcomer has little history of") })
    }

    /// With one device in the store there are no other devices to lend their times (issue 40
    /// item 20): a reason for an app with little history of its own says where its chance came
    /// from, never "devices like …" or "from other devices".
    @Test func aLoneDevicesReasonsDoNotCiteOtherDevices() async throws {
        let f = try RepositoryFixture()
        try f.ingest(["2023-11-27T08:00:00+01:00,newcomer,mail,launch,,,"])
        let at = Timestamp.parseArgument("2023-11-27T08:00:01+01:00")!
        var request = PredictionRequest(device: "newcomer", at: at, count: 3, budget: 3)
        request.apps = ["mail"]
        let alone = try await Predictor.predict(request, snapshot: try ModelRepository(store: f.store).refresh())
        #expect(!alone.isEmpty, "nothing planned")
        for p in alone {
            #expect(!p.reason.contains("other devices:") && !p.reason.hasPrefix("devices like"), "\(p.reason)")
            #expect(p.reason.contains("from a generic day: newcomer has little history of mail, and no other device in the store has any to lend"),
                    "\(p.reason)")
        }
        // With other devices in the store, their times are lent, and the reason says so.
        try f.ingest(habits(days: 0..<14))
        let lent = try await Predictor.predict(request, snapshot: try ModelRepository(store: f.store).refresh())
        #expect(!lent.isEmpty && lent.allSatisfy {
            $0.reason.hasPrefix("devices like newcomer ") && $0.reason.contains("from other devices: newcomer has little history of mail")
        }, "\(lent)")
    }

    @Test func unknownDeviceOrAppIsAClearError() async throws {
        let f = try RepositoryFixture()
        try f.ingest(habits(days: 0..<3))
        let snapshot = try await ModelRepository(store: f.store).refresh()
        await #expect(throws: PredictionError.self) { try await Predictor.predict(PredictionRequest(device: "zz"), snapshot: snapshot) }
        await #expect(throws: PredictionError.self) { try await Predictor.predict(PredictionRequest(app: "nope"), snapshot: snapshot) }
    }
}
