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
    /// About how many bytes of schedulers the cache holds at most.
    package let capacityBytes: Int

    struct Entry: Sendable {
        var caughtUp: ModelRepository.CaughtUp
        /// ``ModelRepository/priorTag(_:)`` of the prior the scheduler was built with.
        var priorTag: UInt64
        var cost: Int
        var stamp: UInt64
    }

    private struct State: Sendable {
        var entries: [ModelRepository.SchedulerKey: Entry] = [:]
        /// Keys in the order they were last used (oldest first, from `head`); a key appears again
        /// each time it is used, and only its latest appearance (`stamp`) counts.
        var order: [(key: ModelRepository.SchedulerKey, stamp: UInt64)] = []
        var head = 0
        var bytes = 0
        var clock: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Creates an empty cache.
    /// - Parameter capacityBytes: About how many bytes of schedulers to keep (64 MiB: about a
    ///   thousand devices of the benchmark's synthetic fleet, a hundred of the development trace).
    package init(capacityBytes: Int = 64 << 20) {
        self.capacityBytes = capacityBytes
    }

    /// The entry kept for `key`, if any (counts as a use).
    func entry(_ key: ModelRepository.SchedulerKey) -> Entry? {
        state.withLock { s in
            guard var entry = s.entries[key] else { return nil }
            s.clock += 1
            entry.stamp = s.clock
            s.entries[key] = entry
            s.order.append((key, s.clock))
            Self.compact(&s)
            return entry
        }
    }

    /// Keeps a caught-up scheduler for `key`, replacing what was kept for it.
    func keep(_ caughtUp: ModelRepository.CaughtUp, priorTag: UInt64, for key: ModelRepository.SchedulerKey) {
        let cost = caughtUp.scheduler.model.approximateBytes + 2048
        state.withLock { s in
            if let old = s.entries.removeValue(forKey: key) { s.bytes -= old.cost }
            guard cost <= capacityBytes else { return }
            while s.bytes + cost > capacityBytes, s.head < s.order.count {
                let (oldest, stamp) = s.order[s.head]
                s.head += 1
                if let entry = s.entries[oldest], entry.stamp == stamp {
                    s.entries[oldest] = nil
                    s.bytes -= entry.cost
                }
            }
            s.clock += 1
            s.entries[key] = Entry(caughtUp: caughtUp, priorTag: priorTag, cost: cost, stamp: s.clock)
            s.order.append((key, s.clock))
            s.bytes += cost
            Self.compact(&s)
        }
    }

    /// Drops the order's used-up prefix and stale appearances once they outnumber the live ones.
    private static func compact(_ s: inout State) {
        guard s.order.count > 1024, s.order.count > 2 * s.entries.count + 64 else { return }
        s.order = s.order[s.head...].filter { s.entries[$0.key]?.stamp == $0.stamp }
        s.head = 0
    }

    /// Schedulers held (for tests and metrics).
    package var count: Int { state.withLock { $0.entries.count } }

    /// About how many bytes the schedulers held take (for tests and metrics).
    package var bytes: Int { state.withLock { $0.bytes } }
}
