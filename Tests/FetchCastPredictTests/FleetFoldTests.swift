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
    @Test func storeAndTraceFoldsGiveByteIdenticalModels() throws {
        let temporary = try TemporaryStore()
        let store = try temporary.open()
        _ = try Ingestor(store: store, options: .init(now: { 1_700_000_000 })).ingest(path: sample)
        let repository = ModelRepository(store: store)
        repository.foldBatchSize = 2  // several batches, each re-reading the publishes to every device
        let snapshot = try repository.refresh()

        let (learner, names) = try PriorBuilder.learn(
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

extension DeviceModel {
    /// The same model with every app id mapped through `id` (only the keys change).
    fileprivate func renumberingApps(_ id: (Int32) -> Int32) -> DeviceModel {
        var m = self
        m.apps = Dictionary(uniqueKeysWithValues: apps.map { (id($0.key), $0.value) })
        m.triggerTrials = Dictionary(uniqueKeysWithValues: triggerTrials.map { (id($0.key), $0.value) })
        m.content = Dictionary(uniqueKeysWithValues: content.map { (id($0.key), $0.value) })
        m.recent = recent.map { var r = $0; r.app = id(r.app); return r }
        var pairs: [UInt64: Double] = [:]
        pairSuccesses.forEach { key, weight in
            let x = Int32(bitPattern: UInt32(key >> 32)), y = Int32(bitPattern: UInt32(truncatingIfNeeded: key))
            pairs[DeviceModel.pairKey(id(x), id(y))] = weight
        }
        m.pairSuccesses = PairWeights(pairs)
        return m
    }
}
