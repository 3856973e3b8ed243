import FetchCastCore
import FetchCastModel
import FetchCastStore
import FetchCastTestSupport
import Testing
@testable import FetchCastPredict

/// Scheduler checkpoints: their saved form, and keeping them in a store (save, restore, invalidate).
struct SchedulerCheckpointTests {
    static let checkpoint = SchedulerCheckpoint(
        conditions: DeviceConditions(network: .wifi, power: .charging), limitMicros: 1_700_000_000_123_456, watermark: 42,
        seen: true, priorTag: 0xDEAD_BEEF_0123_4567, scheduler: [1, 2, 3, 250])

    @Test func theSavedFormRoundTripsAndRefusesOtherVersionsAndDamage() throws {
        let bytes = Self.checkpoint.binaryEncoded()
        let read = bytes.withUnsafeBytes { SchedulerCheckpoint(binary: $0, watermark: 42) }
        #expect(read == Self.checkpoint)
        // The watermark is the row's, not in the bytes.
        #expect(bytes.withUnsafeBytes { SchedulerCheckpoint(binary: $0, watermark: 7) }?.watermark == 7)
        var older = bytes
        older[0] = UInt8(SchedulerCheckpoint.version - 1)  // the version comes first, little-endian
        #expect(older.withUnsafeBytes { SchedulerCheckpoint(binary: $0, watermark: 42) } == nil)
        #expect(bytes.dropLast().withUnsafeBytes { SchedulerCheckpoint(binary: $0, watermark: 42) } == nil)
        #expect((bytes + [0]).withUnsafeBytes { SchedulerCheckpoint(binary: $0, watermark: 42) } == nil)
    }

    @Test func aStoreKeepsCheckpointsUntilTheyAreInvalidated() async throws {
        let temporary = try TemporaryStore()
        let store = try temporary.open()
        let checkpoints = StoreSchedulerCheckpoints(store: store)
        let key = ModelRepository.schedulerPrefix + "1:abc"
        #expect(try await checkpoints.checkpoint(key: key) == nil)
        try await store.writeTransaction { try await checkpoints.save([(Self.checkpoint, key)]) }
        #expect(try await checkpoints.checkpoint(key: key) == Self.checkpoint)
        var later = Self.checkpoint
        later.watermark = 43
        later.seen = false
        try await store.writeTransaction { try await checkpoints.save([(later, key)]) }
        #expect(try await checkpoints.checkpoint(key: key) == later, "a save replaces what was kept")
        // Invalidating drops every checkpoint and nothing else.
        try await store.writeTransaction {
            try store.saveModelStates([Store.ModelStateRecord(key: "other", watermark: 1, state: [9])])
            try await checkpoints.invalidateAll()
        }
        #expect(try await checkpoints.checkpoint(key: key) == nil)
        #expect(try await store.modelState(key: "other")?.state == [9])
    }
}
