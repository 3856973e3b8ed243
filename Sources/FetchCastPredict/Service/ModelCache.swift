import FetchCastModel
import Synchronization

/// Decoded device models and their priors, shared by the repositories of one process (the
/// service's readers) and valid for one saved fold: a device planned again reads no row of
/// the store and decodes nothing until the next fold is saved.
///
/// Entries are keyed by device id and tagged with the watermark of the saved fold they were
/// read from; the first entry of a newer fold empties the cache (every prior depends on the
/// whole population, so a fold changes them all). Bounded by an estimate of the bytes held,
/// dropping the least recently used entries first, so memory does not grow with the number of
/// devices.
package final class ModelCache: Sendable {
    private struct Entry: Sendable {
        var model: DeviceModel
        var prior: DevicePrior
        var priorTag: UInt64
    }

    private struct State: Sendable {
        var watermark: Int64 = -1
        var entries: BoundedCache<Int64, Entry>
    }

    private let state: Mutex<State>

    /// Creates an empty cache.
    /// - Parameter capacityBytes: About how many bytes of decoded state to keep (64 MiB: some
    ///   thousands of devices of the development trace's size).
    package init(capacityBytes: Int = 64 << 20) {
        state = Mutex(State(entries: BoundedCache(capacityBytes: capacityBytes)))
    }

    /// The cached state of a device read from the saved fold at `watermark`, if any.
    func state(of device: Int64, watermark: Int64) -> (model: DeviceModel, prior: DevicePrior, priorTag: UInt64)? {
        state.withLock { s in
            guard s.watermark == watermark, let entry = s.entries.value(for: device) else { return nil }
            return (entry.model, entry.prior, entry.priorTag)
        }
    }

    /// Keeps a device's state read from the saved fold at `watermark`.
    /// - Parameters:
    ///   - priorTag: ``ModelRepository/priorTag(_:)`` of `prior`.
    ///   - cost: About how many bytes the state takes (its encoded size will do).
    func keep(_ model: DeviceModel, prior: DevicePrior, priorTag: UInt64, of device: Int64, watermark: Int64, cost: Int) {
        state.withLock { s in
            if watermark != s.watermark {
                guard watermark > s.watermark else { return }  // a reader of an older snapshot
                s.entries.removeAll()
                s.watermark = watermark
            }
            s.entries.keep(Entry(model: model, prior: prior, priorTag: priorTag), for: device, cost: cost)
        }
    }

    /// Devices held (for tests and metrics).
    package var count: Int { state.withLock { $0.entries.count } }
}
