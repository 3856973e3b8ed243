import FetchCastModel
import Synchronization

/// Decoded device models and their priors, shared by the repositories of one process (the
/// service's readers): a device planned again reads one small column of the store and decodes
/// nothing while its saved model and the prior epoch stay.
///
/// Entries are keyed by device id and tagged with the watermark of the device's saved model
/// (the fold that last changed it) and the tag of the prior epoch; an entry is used only while
/// both still hold, so a fold that changed other devices leaves it in place (within an epoch a
/// prior moves only with its device's apps, which change only with its model). Bounded by an
/// estimate of the bytes held, dropping the least recently used entries first, so memory does
/// not grow with the number of devices.
package final class ModelCache: Sendable {
    private struct Entry: Sendable {
        var model: DeviceModel
        var prior: DevicePrior
        var priorTag: UInt64
        var modelWatermark: Int64
        var epochTag: UInt64
    }

    private let entries: Mutex<BoundedCache<Int64, Entry>>

    /// Creates an empty cache.
    /// - Parameter capacityBytes: About how many bytes of decoded state to keep (64 MiB: some
    ///   thousands of devices of the development trace's size).
    package init(capacityBytes: Int = 64 << 20) {
        entries = Mutex(BoundedCache(capacityBytes: capacityBytes))
    }

    /// The cached state of a device whose saved model has the watermark `modelWatermark`, with
    /// a prior of the epoch tagged `epochTag`, if any.
    func state(of device: Int64, modelWatermark: Int64, epochTag: UInt64) -> (model: DeviceModel, prior: DevicePrior, priorTag: UInt64)? {
        entries.withLock { entries in
            guard let entry = entries.value(for: device), entry.modelWatermark == modelWatermark, entry.epochTag == epochTag else { return nil }
            return (entry.model, entry.prior, entry.priorTag)
        }
    }

    /// Keeps a device's state: its saved model (of watermark `modelWatermark`) and its prior in
    /// the epoch tagged `epochTag`.
    /// - Parameters:
    ///   - priorTag: ``ModelRepository/priorTag(_:)`` of `prior`.
    ///   - cost: About how many bytes the state takes (its encoded size will do).
    func keep(_ model: DeviceModel, prior: DevicePrior, priorTag: UInt64, of device: Int64, modelWatermark: Int64, epochTag: UInt64, cost: Int) {
        // What it drops is released here, after the lock.
        _ = entries.withLock { entries -> [Entry] in
            // A reader of an older snapshot does not replace what a newer one kept.
            if let kept = entries.value(for: device), kept.epochTag == epochTag, kept.modelWatermark > modelWatermark { return [] }
            return entries.keep(
                Entry(model: model, prior: prior, priorTag: priorTag, modelWatermark: modelWatermark, epochTag: epochTag), for: device, cost: cost)
        }
    }

    /// Devices held (for tests and metrics).
    package var count: Int { entries.withLock { $0.count } }
}
