import FetchCastCore
import FetchCastModel

/// A following scheduler caught up with a device's events, as kept between processes
/// (`predict` runs one process per call; the service's warm-up saves for its readers): what
/// ``ModelRepository`` restores instead of catching up from nothing, when it is still exact.
///
/// Saved as: this format's version, the conditions, where it stopped, whether it saw an event,
/// the tag of its prior, then its scheduler's state (``LearnedPolicy/savedState()``), not
/// restored until it is known to be usable. Rows of fetchcast 0.5.0 (JSON) are not read: the
/// next plan catches up from the events and saves the row again; nor are rows of version 2,
/// saved before a habit's chance started from 4 pseudo-days, and of version 3, before those
/// pseudo-days' chance was placed within the hour (their looks valued otherwise).
struct SchedulerCheckpoint: Sendable, Equatable {
    /// The device's conditions as its `state` rows set them.
    var conditions: DeviceConditions
    /// The scheduler was told of the events before this instant (µs).
    var limitMicros: Int64
    /// The store's last event id as of the catching up.
    var watermark: Int64
    /// Whether it was told of any event.
    var seen: Bool
    /// ``ModelRepository/priorTag(_:)`` of the prior it was built with.
    var priorTag: UInt64
    /// ``LearnedPolicy/savedState()`` of the scheduler.
    var scheduler: [UInt8]

    /// The format written.
    static let version = 4

    /// The saved form (the watermark is kept beside it, as the row's).
    func binaryEncoded() -> [UInt8] {
        var w = BinaryWriter()
        w.int(Self.version)
        w.conditions(conditions)
        w.int(Int(limitMicros))
        w.bool(seen)
        w.uint64(priorTag)
        w.blob(scheduler)
        return w.bytes
    }

    /// Reads a saved checkpoint; `nil` for bytes of another version, or damaged.
    init?(binary bytes: UnsafeRawBufferPointer, watermark: Int64) {
        var r = BinaryReader(bytes)
        guard (try? r.int()) == Self.version, let conditions = try? r.conditions(), let limit = try? r.int(),
              let seen = try? r.bool(), let tag = try? r.uint64(), let scheduler = try? r.blob(), r.offset == bytes.count
        else { return nil }
        self.init(
            conditions: conditions, limitMicros: Int64(limit), watermark: watermark, seen: seen, priorTag: tag, scheduler: Array(scheduler))
    }

    /// A checkpoint.
    init(conditions: DeviceConditions, limitMicros: Int64, watermark: Int64, seen: Bool, priorTag: UInt64, scheduler: [UInt8]) {
        self.conditions = conditions
        self.limitMicros = limitMicros
        self.watermark = watermark
        self.seen = seen
        self.priorTag = priorTag
        self.scheduler = scheduler
    }
}
