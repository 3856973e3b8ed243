import FetchCastModel
import Synchronization

/// Decoded device models and their priors, shared by the repositories of one process (the
/// service's readers) and valid for one saved fold: a device planned again reads no row of
/// the store and decodes nothing until the next fold is saved.
///
/// Entries are keyed by device id and tagged with the watermark of the saved fold they were
/// read from; the first entry of a newer fold empties the cache (every prior depends on the
/// whole population, so a fold changes them all). Bounded by an estimate of the bytes held,
/// evicting the oldest entries first, so memory does not grow with the number of devices.
package final class ModelCache: Sendable {
    /// About how many bytes of decoded state the cache holds at most.
    package let capacityBytes: Int

    private struct Entry {
        var model: DeviceModel
        var prior: DevicePrior
        var priorTag: UInt64
        var cost: Int
    }

    private struct State {
        var watermark: Int64 = -1
        var entries: [Int64: Entry] = [:]
        /// Devices in the order they were added (oldest first, from `head`).
        var order: [Int64] = []
        var head = 0
        var bytes = 0
    }

    private let state = Mutex(State())

    /// Creates an empty cache.
    /// - Parameter capacityBytes: About how many bytes of decoded state to keep (64 MiB: some
    ///   thousands of devices of the development trace's size).
    package init(capacityBytes: Int = 64 << 20) {
        self.capacityBytes = capacityBytes
    }

    /// The cached state of a device read from the saved fold at `watermark`, if any.
    func state(of device: Int64, watermark: Int64) -> (model: DeviceModel, prior: DevicePrior, priorTag: UInt64)? {
        state.withLock { s in
            guard s.watermark == watermark, let entry = s.entries[device] else { return nil }
            return (entry.model, entry.prior, entry.priorTag)
        }
    }

    /// Keeps a device's state read from the saved fold at `watermark`.
    /// - Parameter cost: About how many bytes the state takes (its encoded size will do).
    /// - Parameter priorTag: ``ModelRepository/priorTag(_:)`` of `prior`.
    func keep(_ model: DeviceModel, prior: DevicePrior, priorTag: UInt64, of device: Int64, watermark: Int64, cost: Int) {
        state.withLock { s in
            if watermark != s.watermark {
                guard watermark > s.watermark else { return }  // a reader of an older snapshot
                s = State()
                s.watermark = watermark
            }
            guard cost <= capacityBytes, s.entries[device] == nil else { return }
            while s.bytes + cost > capacityBytes, s.head < s.order.count {
                let oldest = s.order[s.head]
                s.head += 1
                if let gone = s.entries.removeValue(forKey: oldest) { s.bytes -= gone.cost }
            }
            if s.head > 1024, s.head * 2 > s.order.count {
                s.order.removeFirst(s.head)
                s.head = 0
            }
            s.entries[device] = Entry(model: model, prior: prior, priorTag: priorTag, cost: cost)
            s.order.append(device)
            s.bytes += cost
        }
    }

    /// Devices held (for tests and metrics).
    package var count: Int { state.withLock { $0.entries.count } }
}
