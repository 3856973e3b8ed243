import FetchCastStore

/// Where caught-up schedulers are kept between processes, by key (``ModelRepository/storageKey(_:)``):
/// save, restore, invalidate; in the store's model state, one row per key under
/// ``ModelRepository/schedulerPrefix``, the row's watermark the checkpoint's. Whether a
/// checkpoint is still exact is the repository's to decide (its watermark, where it stopped and
/// its prior's tag); this only keeps them.
struct StoreSchedulerCheckpoints {
    let store: any ModelStore

    /// The checkpoint kept under `key`; `nil` when none is, or it cannot be read (another
    /// format). Inside the caller's transaction.
    func checkpoint(key: String) async throws -> SchedulerCheckpoint? {
        try await store.withModelState(key: key) { watermark, bytes in SchedulerCheckpoint(binary: bytes, watermark: watermark) } ?? nil
    }

    /// Keeps each checkpoint under its key, replacing what was kept there, inside the caller's
    /// write transaction.
    func save(_ checkpoints: [(checkpoint: SchedulerCheckpoint, key: String)]) async throws {
        try await store.saveModelStates(checkpoints.map { Store.ModelStateRecord(key: $0.key, watermark: $0.checkpoint.watermark, state: $0.checkpoint.binaryEncoded()) })
    }

    /// Forgets every checkpoint (their keys or format changed), inside the caller's write
    /// transaction.
    func invalidateAll() async throws {
        try await store.deleteModelStates(prefix: ModelRepository.schedulerPrefix)
    }
}
