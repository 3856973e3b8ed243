import FetchCastModel
import Synchronization

/// Following schedulers caught up with devices' events, shared by the repositories of one
/// process (the service's readers): a plan asked again, or asked after the device's own new
/// events, goes on from where the last one left off instead of replaying the device's history.
///
/// An entry is a ``LearnedPolicy`` told of its device's events before some instant, as of some
/// state of the store (the last event id then), with a tag of the prior it was built with. It
/// is only ever used where it is exactly what catching up from nothing would give (see
/// ``ModelRepository``): same prior, no event of the device added since before that instant.
/// Bounded by an estimate of the bytes held (``DeviceModel/approximateBytes``), dropping the
/// least recently used entries first, so memory does not grow with the number of devices.
package final class SchedulerCache: Sendable {
    struct Entry: Sendable {
        var caughtUp: ModelRepository.CaughtUp
        /// ``ModelRepository/priorTag(_:)`` of the prior the scheduler was built with.
        var priorTag: UInt64
        /// The tag of the prior epoch it was caught up in (`nil`: a fold kept in memory only).
        var epochTag: UInt64?
    }

    private let state: Mutex<BoundedCache<ModelRepository.SchedulerKey, Entry>>

    /// Creates an empty cache.
    /// - Parameter capacityBytes: About how many bytes of schedulers to keep (32 MiB: a few
    ///   hundred devices of the benchmark's synthetic fleet, tens of the development trace's).
    package init(capacityBytes: Int = 32 << 20) {
        state = Mutex(BoundedCache(capacityBytes: capacityBytes))
    }

    /// The entry kept for `key`, if any (counts as a use).
    func entry(_ key: ModelRepository.SchedulerKey) -> Entry? {
        state.withLock { $0.value(for: key) }
    }

    /// Keeps a caught-up scheduler for `key`, replacing what was kept for it.
    func keep(_ caughtUp: ModelRepository.CaughtUp, priorTag: UInt64, epochTag: UInt64?, for key: ModelRepository.SchedulerKey) {
        let cost = caughtUp.scheduler.model.approximateBytes + 2048
        // What it drops is released here, after the lock.
        _ = state.withLock { $0.keep(Entry(caughtUp: caughtUp, priorTag: priorTag, epochTag: epochTag), for: key, cost: cost) }
    }

    /// Schedulers held (for tests and metrics).
    package var count: Int { state.withLock { $0.count } }

    /// About how many bytes the schedulers held take (for tests and metrics).
    package var bytes: Int { state.withLock { $0.bytes } }
}
