import FetchCastCore
import FetchCastStore
import FetchCastTestSupport
import FetchCastTrace
import Foundation
import Testing
@testable import FetchCastModel
@testable import FetchCastPredict
@testable import FetchCastReplay

/// The bundled sample trace (14 days of a few UbiqLog users).
private let sample = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Data/ubiqlog-sample.csv.gz").path

/// The store's fold (``ModelRepository``, `predict`) and the trace's fold (``PriorBuilder``,
/// `evaluate --prior-from`) are one ``FleetLearner``: the same events give the same bits.
struct FleetFoldTests {
    @Test func storeAndTraceFoldsGiveByteIdenticalModels() async throws {
        let temporary = try TemporaryStore()
        let store = try temporary.open()
        _ = try Ingestor(store: store, options: .init(now: { 1_700_000_000 })).ingest(path: sample)
        let repository = ModelRepository(store: store)
        repository.foldBatchSize = 2  // several batches, each re-reading the publishes to every device
        let snapshot = try await repository.refresh()

        let (learner, names, _) = try PriorBuilder.learn(
            traces: [sample], devices: nil, tau: ModelConfiguration().tau, options: TraceOptions())
        // App ids differ (the store's `apps.id`, the trace's symbols): renumber by name.
        var storeApp: [String: Int32] = [:]
        for (id, name) in snapshot.appNames { storeApp[name] = Int32(id) }
        #expect(snapshot.models.count == learner.models.count)
        #expect(snapshot.models.count > 1)
        for (symbol, model) in learner.models {
            let name = names[Int(symbol)]
            let id = try #require(snapshot.device(named: name))
            let stored = try #require(snapshot.models[id])
            #expect(stored.eventCount > 0)
            let renumbered = model.renumberingApps { storeApp[names[Int($0)]]! }
            #expect(try renumbered.binaryEncoded() == stored.binaryEncoded(), "device \(name)")
        }
    }
}

/// The indexed leave-one-out prior is the plain one, bit for bit.
struct PopulationIndexTests {
    @Test func indexedPriorsEqualThePlainOnesOnTheSample() throws {
        let (learner, names, _) = try PriorBuilder.learn(
            traces: [sample], devices: nil, tau: ModelConfiguration().tau, options: TraceOptions())
        let name: (Int32) -> String = { names[Int($0)] }
        var sums = PopulationSums()
        for model in learner.models.values { sums.add(PopulationSums(model: model, name: name)) }
        let index = PopulationIndex(sums)
        // As a reader gets them: decoded from the saved bytes straight into an index.
        let bytes = sums.binaryEncoded()
        let decoded = try bytes.withUnsafeBytes { try PopulationIndex(binary: $0) }
        #expect(try bytes.withUnsafeBytes { try PopulationSums(binary: $0) }.binaryEncoded() == bytes)
        var pairs = 0
        for model in learner.models.values {
            var apps: [Int32: String] = [:]
            for app in model.appsBySessions { apps[app] = name(app) }
            let plain = sums.devicePrior(excluding: PopulationSums(model: model, name: name), apps: apps)
            #expect(index.devicePrior(excluding: model, name: name, apps: apps).binaryEncoded() == plain.binaryEncoded())
            #expect(decoded.devicePrior(excluding: model, name: name, apps: apps).binaryEncoded() == plain.binaryEncoded())
            let whole = sums.devicePrior(excluding: PopulationSums(), apps: apps)
            #expect(index.devicePrior(excluding: nil, name: name, apps: apps).binaryEncoded() == whole.binaryEncoded())
            pairs += plain.pairs.count
        }
        #expect(pairs > 100, "co-usage pairs in the priors: \(pairs)")
    }
}

/// A second file after the sample: more days of two of its devices (one app new to them) and
/// a device new to the store, so that a fold of it changes three devices and leaves the rest.
private func secondFile() -> [String] {
    var rows = ["time,device,app,event,result,bytes,duration_ms"]
    for day in 1...3 {
        for (device, app) in [("19_F", "com.whatsapp"), ("7_F", "new.app"), ("zz_new", "com.whatsapp")] {
            rows.append("2015-04-0\(day)T08:1\(day):00+01:00,\(device),\(app),launch,,,")
            rows.append("2015-04-0\(day)T08:2\(day):00+01:00,\(device),com.android.mms,launch,,,")
            rows.append("2015-04-0\(day)T21:0\(day):00+01:00,\(device),\(app),launch,,,")
        }
    }
    return rows
}

/// Folding a second file into a saved fold touches only the devices it has events of, and
/// gives the same bits as folding both files from scratch.
struct IncrementalFoldTests {
    private func store(ingesting files: [String], in temporary: TemporaryStore) throws -> Store {
        let store = try temporary.open()
        for file in files { _ = try Ingestor(store: store, options: .init(now: { 1_700_000_000 })).ingest(path: file) }
        return store
    }

    @Test func incrementalFoldAfterASecondFileEqualsAFullFoldOfBoth() async throws {
        let incremental = try TemporaryStore()
        let second = try incremental.write("second.csv", secondFile().joined(separator: "\n"))
        let a = try store(ingesting: [sample], in: incremental)
        let repository = ModelRepository(store: a)
        repository.foldBatchSize = 3
        repository.priorEpochGrowth = 0  // every fold starts a prior epoch: priors as from scratch
        _ = try await repository.refresh()
        let firstWatermark = try a.lastEventID()
        _ = try Ingestor(store: a, options: .init(now: { 1_700_000_000 })).ingest(path: second)
        let folded = try await repository.refresh()
        #expect(folded.eventsFolded == secondFile().count - 1, "only the new events")

        let scratch = try TemporaryStore()
        let b = try store(ingesting: [sample, try scratch.write("second.csv", secondFile().joined(separator: "\n"))], in: scratch)
        let whole = try await ModelRepository(store: b).refresh()
        #expect(whole.eventsFolded == 32_890 + secondFile().count - 1)

        // Same ids in both stores (same files, same order): compare row by row.
        let incrementalRows = try a.modelStates(prefix: "")
        let scratchRows = try b.modelStates(prefix: "")
        #expect(incrementalRows.map(\.key) == scratchRows.map(\.key))
        #expect(incrementalRows.count == 35, "15 + 3 + 15 + 2: models, sums, publishes, watermark, priors, the prior epoch and its sums")
        #expect(incrementalRows.map(\.state) == scratchRows.map(\.state), "models, population sums, publishes: the same bytes")
        #expect(try #require(incrementalRows.first { $0.key == "population" }).state.count > 1000)
        // Only the three devices of the second file were rewritten.
        let changed = Set(["19_F", "7_F", "zz_new"].map { "device:\(folded.device(named: $0)!)" })
        let lastID = try a.lastEventID()
        for row in incrementalRows where row.key.hasPrefix("device:") {
            #expect(row.watermark == (changed.contains(row.key) ? lastID : firstWatermark), "\(row.key)")
        }
        // And every device's prior (the others' sums without it) is the same.
        #expect(folded.models.count == 15)
        for id in whole.models.keys {
            #expect(folded.prior(for: id).binaryEncoded() == whole.prior(for: id).binaryEncoded())
            #expect(try folded.models[id]?.binaryEncoded() == whole.models[id]!.binaryEncoded())
        }
        // The priors saved by the fold are read without the sums: with the sums rows damaged, a
        // new repository answers the same.
        try a.saveModelStates([
            Store.ModelStateRecord(key: "population", watermark: lastID, state: [1, 2, 3]),
            Store.ModelStateRecord(key: "epoch-population", watermark: lastID, state: [1, 2, 3]),
        ])
        let fromSaved = try await ModelRepository(store: a).refresh()
        #expect(fromSaved.eventsFolded == 0)
        for id in whole.models.keys {
            #expect(fromSaved.prior(for: id).binaryEncoded() == whole.prior(for: id).binaryEncoded())
        }
    }

    @Test func aRepositoryThatSavesNoFoldBringsItsDevicesUpToDateInMemory() async throws {
        let temporary = try TemporaryStore()
        let second = try temporary.write("second.csv", secondFile().joined(separator: "\n"))
        let s = try store(ingesting: [sample], in: temporary)
        let before = try await ModelRepository(store: s).refresh(devices: ["19_F", "17_F"])
        let watermark = try s.lastEventID()
        _ = try Ingestor(store: s, options: .init(now: { 1_700_000_000 })).ingest(path: second)

        let reader = ModelRepository(store: s)
        reader.savesFolds = false
        let answered = try await reader.refresh(devices: ["19_F", "zz_new", "17_F"])
        #expect(answered.eventsFolded == 2 * 3 * 3, "the new events of these two devices")
        #expect(try await s.modelState(key: "watermark")?.watermark == watermark, "nothing saved")
        // A device without new events is read as saved, prior included.
        let f17 = try #require(answered.device(named: "17_F"))
        #expect(try answered.models[f17]!.binaryEncoded() == before.models[f17]!.binaryEncoded())
        #expect(answered.prior(for: f17).binaryEncoded() == before.prior(for: f17).binaryEncoded())
        let f19 = try #require(answered.device(named: "19_F")), fNew = try #require(answered.device(named: "zz_new"))
        // The prior is the other devices as of the saved fold (19_F's apps are the same).
        #expect(answered.prior(for: f19).binaryEncoded() == before.prior(for: f19).binaryEncoded())
        #expect(answered.prior(for: f19).binaryEncoded() != DevicePrior.none.binaryEncoded())

        // The models are those a saved fold gives.
        let saved = try await ModelRepository(store: s).refresh(devices: ["19_F", "zz_new"])
        #expect(try await s.modelState(key: "watermark")?.watermark == s.lastEventID())
        for id in [f19, fNew] {
            #expect(try answered.models[id]!.binaryEncoded() == saved.models[id]!.binaryEncoded())
        }
        #expect(answered.models[f19]!.eventCount == before.models[f19]!.eventCount + 9)
        // Saved, the fold stays in the prior epoch (a few events more than the epoch's 32,890):
        // the prior is still the other devices as of the first fold.
        #expect(saved.prior(for: f19).binaryEncoded() == answered.prior(for: f19).binaryEncoded())
    }
}

extension DeviceModel {
    /// The same model with every app id mapped through `id` (only the keys change).
    fileprivate func renumberingApps(_ id: (Int32) -> Int32) -> DeviceModel {
        var m = self
        m.apps = Dictionary(uniqueKeysWithValues: apps.map { (id($0.key), $0.value) })
        m.triggerTrials = Dictionary(uniqueKeysWithValues: triggerTrials.map { (id($0.key), $0.value) })
        m.content = Dictionary(uniqueKeysWithValues: content.map { (id($0.key), $0.value) })
        m.recent = RecentLaunches(recent.map { var r = $0; r.app = id(r.app); return r })
        m.habitLog.sessions = Dictionary(uniqueKeysWithValues: habitLog.sessions.map { (id($0.key), $0.value) })
        m.pickupLog.pickups = pickupLog.pickups.map { var p = $0; p.apps = p.apps.map(id); return p }
        var pairs: [UInt64: Double] = [:]
        pairSuccesses.forEach { key, weight in
            let x = Int32(bitPattern: UInt32(key >> 32)), y = Int32(bitPattern: UInt32(truncatingIfNeeded: key))
            pairs[DeviceModel.pairKey(id(x), id(y))] = weight
        }
        m.pairSuccesses = PairWeights(pairs)
        return m
    }
}

/// The fold is a pure ``FleetLearner`` over an ordered event stream: one learner fed the
/// events in memory, no store, ends where the repository's incremental, batched fold of the
/// same events (two ingests, each folded as it came; every device's share taken out and pooled
/// again) ends, bit for bit: the same models and the same population sums.
struct FleetLearnerStreamTests {
    /// Two weeks of three devices' habits and a publish to every device each day at noon, as
    /// trace rows in time order.
    private static func rows() -> [String] {
        var rows = HabitTrace.rows(devices: ["a", "b", "c"], days: 0..<14)
        for day in 0..<14 {
            let date = Timestamp.format(micros: Int64(1_699_833_600 + day * 86_400) * 1_000_000, utcOffsetSeconds: 3600).prefix(10)
            rows.append("\(date)T12:00:00+01:00,,news,publish,,,")
        }
        return rows.sorted()
    }

    @Test func aLearnerFedTheEventsInMemoryEndsWhereTheRepositorysFoldEnds() async throws {
        let rows = Self.rows()
        let half = rows.count / 2
        let temporary = try TemporaryStore()
        let store = try temporary.open()
        let repository = ModelRepository(store: store)
        repository.foldBatchSize = 2
        try temporary.ingest(Array(rows[..<half]), into: store)
        _ = try await repository.refresh()
        try temporary.ingest(Array(rows[half...]), into: store)
        let snapshot = try await repository.refresh()
        #expect(snapshot.eventsFolded > 0)

        // The same rows as an in-memory stream in ingest order: devices by name, apps by a table of our own.
        let apps = ["chat", "mail", "news"]
        var learner = FleetLearner<String>()
        for row in rows {
            let f = row.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            let parsed = try Array(f[0].utf8).withUnsafeBytes { try Timestamp.parse($0) }
            let kind = try #require(EventKind(name: f[3]))
            learner.observe(
                DeviceEvent(time: Double(parsed.micros) / 1_000_000, utcOffsetSeconds: parsed.utcOffsetSeconds,
                            app: Int32(apps.firstIndex(of: f[2])!), kind: kind),
                device: f[1].isEmpty ? nil : f[1])
        }
        for device in learner.models.keys.sorted() { learner.pool(device) { apps[Int($0)] } }

        #expect(learner.models.count == 3)
        var storeApp: [String: Int32] = [:]
        for (id, name) in snapshot.appNames { storeApp[name] = Int32(id) }
        for (device, model) in learner.models {
            let id = try #require(snapshot.device(named: device))
            let stored = try #require(snapshot.models[id])
            let renumbered = model.renumberingApps { storeApp[apps[Int($0)]]! }
            #expect(try renumbered.binaryEncoded() == stored.binaryEncoded(), "device \(device)")
        }
        let saved = try #require(try await store.modelState(key: ModelRepository.populationKey))
        #expect(saved.state == learner.population.binaryEncoded())
        let everyone = try #require(try await store.modelState(key: ModelRepository.everyoneKey))
        #expect(everyone.state == (try learner.everyone.renumberingApps { storeApp[apps[Int($0)]]! }.binaryEncoded()))
    }
}
