/// The counters of one (policy, budget) replay, for one device or summed over devices.
///
/// Sums over devices are taken in ascending device-name order, so totals (and the reals among
/// them) do not depend on how many threads replayed the devices.
public struct DeviceMetrics: Sendable, Hashable, Codable {
    /// Devices (1 for one device).
    public var devices = 0
    /// Σ (last launch − first launch) / 86400.
    public var deviceDays = 0.0
    /// Launches of fetch-enabled apps.
    public var launches = 0
    /// Launches that are scored (all but each pair's first).
    public var scoredLaunches = 0
    /// Scored launches whose pair was last launched more than τ earlier.
    public var needyLaunches = 0
    /// Scored launches with staleness ≤ τ.
    public var freshLaunches = 0
    /// Needy launches that are fresh.
    public var freshNeedyLaunches = 0
    /// Σ min(staleness, 86400 s) over scored launches, in seconds.
    public var stalenessSeconds = 0.0
    /// Scored launches whose cache held every publish older than τ.
    public var contentFreshLaunches = 0
    /// The policy's fetches (made; refused ones excluded).
    public var fetches = 0
    /// Fetches whose result was `newData` / `noData` (rule 6).
    public var newDataFetches = 0
    public var noDataFetches = 0
    /// Fetches the engine refused: over the daily cap, or for an app that is not fetch-enabled.
    public var refusedFetches = 0
    /// Radio sessions opened (rule 5).
    public var wakeups = 0
    /// Radio energy, joules.
    public var joules = 0.0
    /// The part of ``joules`` paid from the battery: fetches while charging excluded (rule 7).
    public var batteryJoules = 0.0
    /// Fetches made over cellular (unknown network counts as cellular).
    public var cellularFetches = 0
    /// Bytes of the cellular fetches, each priced at its app's mean `bytes` in the trace's
    /// fetch rows (apps without any count 0).
    public var cellularBytes = 0.0
    /// Fetches made while offline: `failed`, no refresh, no energy.
    public var offlineFetches = 0
    /// Fetches not made because a constraint or system rule failed at that instant.
    public var blockedFetches = 0
    /// Blocked fetches made later, at the first `state` row after which the constraints allowed
    /// them (counted in ``fetches`` too).
    public var deferredFetches = 0
    /// Needy launches and fresh ones, by how long the whole device had been silent before them
    /// (`slices.csv`).
    public var slices = SilenceSlices()
    /// Pushes sent, delivered, collapsed and dropped, and the delivery delays (semantics d1;
    /// zero under `--delivery direct`).
    public var push = PushMetrics()

    /// Creates zeroed counters.
    public init() {}

    /// Adds another device's counters.
    public mutating func add(_ o: DeviceMetrics) {
        devices += o.devices
        deviceDays += o.deviceDays
        launches += o.launches
        scoredLaunches += o.scoredLaunches
        needyLaunches += o.needyLaunches
        freshLaunches += o.freshLaunches
        freshNeedyLaunches += o.freshNeedyLaunches
        stalenessSeconds += o.stalenessSeconds
        contentFreshLaunches += o.contentFreshLaunches
        fetches += o.fetches
        newDataFetches += o.newDataFetches
        noDataFetches += o.noDataFetches
        refusedFetches += o.refusedFetches
        wakeups += o.wakeups
        joules += o.joules
        batteryJoules += o.batteryJoules
        cellularFetches += o.cellularFetches
        cellularBytes += o.cellularBytes
        offlineFetches += o.offlineFetches
        blockedFetches += o.blockedFetches
        deferredFetches += o.deferredFetches
        slices.add(o.slices)
        push.add(o.push)
    }

    /// fresh_launches / scored_launches (NaN when nothing was scored).
    public var freshRatio: Double { Double(freshLaunches) / Double(scoredLaunches) }
    /// fresh needy launches / needy launches.
    public var hitRate: Double { Double(freshNeedyLaunches) / Double(needyLaunches) }
    /// Mean of min(staleness, 1 day) over scored launches, minutes.
    public var meanStalenessMinutes: Double { stalenessSeconds / Double(scoredLaunches) / 60 }
    /// content-fresh launches / scored launches.
    public var contentFreshRatio: Double { Double(contentFreshLaunches) / Double(scoredLaunches) }
    /// A total per device-day.
    public func perDeviceDay(_ total: Double) -> Double { total / deviceDays }
}

/// Needy launches, and the fresh ones among them, split by how long the whole device had been
/// silent — no launch of any app, fetch-enabled or not — before each: `slices.csv`
/// (docs/evaluation.md).
public struct SilenceSlices: Sendable, Hashable, Codable {
    /// The slices, in `slices.csv` order.
    public enum Slice: Int, CaseIterable, Sendable {
        /// Another launch of the device within the 30 minutes before.
        case warm
        /// The device silent for 30 minutes to 2 hours.
        case silent30mTo2h
        /// The device silent for 2 hours or more: the first pickup after a silence.
        case firstPickup

        /// The name written in `slices.csv`.
        public var name: String {
            switch self {
            case .warm: "warm"
            case .silent30mTo2h: "30min-2h"
            case .firstPickup: "first_pickup"
            }
        }

        /// The silence before the launch that the slice starts at (inclusive), seconds, and
        /// where it ends (exclusive; `nil`: no end).
        public var silence: (from: Double, to: Double?) {
            switch self {
            case .warm: (0, 1800)
            case .silent30mTo2h: (1800, 7200)
            case .firstPickup: (7200, nil)
            }
        }

        /// The slice of a launch after `silence` seconds without any launch of the device.
        public init(silence: Double) {
            self = silence < 1800 ? .warm : silence < 7200 ? .silent30mTo2h : .firstPickup
        }
    }

    /// Needy launches per slice.
    public var needy = [0, 0, 0]
    /// Fresh needy launches per slice.
    public var freshNeedy = [0, 0, 0]

    /// Creates zeroed counters.
    public init() {}

    /// Counts a needy launch.
    mutating func count(_ slice: Slice, fresh: Bool) {
        needy[slice.rawValue] += 1
        if fresh { freshNeedy[slice.rawValue] += 1 }
    }

    /// Adds another device's counts.
    public mutating func add(_ o: SilenceSlices) {
        for i in needy.indices {
            needy[i] += o.needy[i]
            freshNeedy[i] += o.freshNeedy[i]
        }
    }

    /// Fresh needy launches / needy launches in `slice` (NaN when it has none).
    public func hitRate(_ slice: Slice) -> Double { Double(freshNeedy[slice.rawValue]) / Double(needy[slice.rawValue]) }
}
