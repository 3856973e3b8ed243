import FetchCastCore
import FetchCastModel
import FetchCastStore
import FetchCastTrace
import Foundation
import Testing
import FetchCastTestSupport
@testable import FetchCastPredict

/// The readers' shared cache of decoded models and priors answers for a device until its saved
/// model or the prior epoch changes, and never after.
struct ModelCacheTests {
    private static func rows(days: Range<Int>, devices: [String]) -> [String] {
        var rows: [String] = []
        for day in days {
            let date = Timestamp.format(micros: Int64(1_699_833_600 + day * 86_400) * 1_000_000, utcOffsetSeconds: 3600).prefix(10)
            for d in devices {
                rows += ["\(date)T08:0\(day % 7):00+01:00,\(d),mail,launch,,,", "\(date)T12:3\(day % 7):00+01:00,\(d),news,launch,,,"]
            }
        }
        return rows
    }

    @Test func aDeviceIsDecodedAgainOnlyWhenItsModelOrTheEpochChanged() async throws {
        let temporary = try TemporaryStore()
        let store = try temporary.open()
        func ingest(_ rows: [String]) throws { try temporary.ingest(rows, into: store) }
        try ingest(Self.rows(days: 0..<14, devices: ["a", "b", "c"]))  // 84 events
        _ = try await ModelRepository(store: store).refresh()  // the writer's fold
        let cache = ModelCache()
        func reader() -> ModelRepository {
            let repository = ModelRepository(store: store)
            repository.cache = cache
            return repository
        }
        func state(_ repository: ModelRepository, _ device: String) async throws -> (model: [UInt8], prior: [UInt8]) {
            let snapshot = try await repository.refresh(devices: [device])
            let id = try #require(snapshot.device(named: device))
            return (try snapshot.models[id]!.binaryEncoded(), snapshot.prior(for: id).binaryEncoded())
        }
        let first = reader()
        let a = try await state(first, "a")
        #expect(first.modelsDecoded == 1)

        // Another device's events (a fold within the epoch): `a` comes from the cache.
        try ingest(Self.rows(days: 14..<15, devices: ["b"]))
        _ = try await ModelRepository(store: store).refresh()  // the writer's fold
        let second = reader()
        #expect(try await state(second, "a") == a)
        #expect(second.modelsDecoded == 0)

        // `a`'s own events: decoded again, and what a repository without the cache answers.
        try ingest(Self.rows(days: 15..<16, devices: ["a"]))
        _ = try await ModelRepository(store: store).refresh()
        let third = reader()
        let changed = try await state(third, "a")
        #expect(third.modelsDecoded == 1)
        #expect(changed.model != a.model)
        #expect(changed == (try await state(ModelRepository(store: store), "a")))

        // A new epoch (events grown by a quarter: 2 + 2 + 28 of 84): decoded again.
        try ingest(Self.rows(days: 16..<30, devices: ["c"]))
        _ = try await ModelRepository(store: store).refresh()
        let fourth = reader()
        #expect(try await state(fourth, "a") == (try state(ModelRepository(store: store), "a")))
        #expect(fourth.modelsDecoded == 1)
    }
}
