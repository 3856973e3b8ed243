import FetchCastCore
import FetchCastModel
import FetchCastTrace

/// `hourly`: the heuristic iOS background fetch is described with, as a causal baseline.
///
/// At the start of every local hour (the device's current UTC offset, taken from its latest
/// launch or fetch event) it ranks the (fetch-enabled app, local hour of day) pairs by how often
/// this device launched that app in that hour before now (launches strictly before the hour
/// start), most first, ties by app id then hour ascending; pairs with no launch are never
/// ranked. It fetches, in rank order, each pair among the top ⌊B⌋ whose hour is the hour now
/// starting, and never more than ⌊B⌋ fetches in one local day. It ignores fetch results.
///
/// - Complexity: O(24·k²) per local hour, O(1) per observed event.
struct HourlyPolicy: FetchPolicy, Sendable {
    private let apps: [Int32]
    private let cap: Int
    /// counts[slot * 24 + hour]
    private var counts: [Int]
    private var offset: Int32?
    private var day = Int.min
    private var usedToday = 0
    private(set) var nextWakeup: Double?

    /// Creates the policy for a device.
    init(context: DeviceContext) {
        apps = context.apps.sorted()
        cap = context.dailyCap
        counts = Array(repeating: 0, count: apps.count * 24)
    }

    /// The first local hour start strictly after `time`.
    static func nextHourStart(after time: Double, offset: Int32) -> Double {
        let local = time + Double(offset)
        return ((local / 3600).rounded(.down) + 1) * 3600 - Double(offset)
    }

    mutating func wake(at time: Double, into fetches: inout [PlannedFetch]) {
        let offset = self.offset ?? 0
        nextWakeup = Self.nextHourStart(after: time, offset: offset)
        guard cap > 0 else { return }
        let today = LocalTime.day(time: time, utcOffsetSeconds: offset)
        if today != day { day = today; usedToday = 0 }
        let hour = LocalTime.hourOfDay(time: time, utcOffsetSeconds: offset)
        var chosen: [(slot: Int, count: Int)] = []
        for slot in apps.indices {
            let c = counts[slot * 24 + hour]
            guard c > 0 else { continue }
            // Pairs ranked ahead of (slot, hour): more launches, or as many with a smaller (app, hour).
            var ahead = 0
            for other in counts.indices {
                let oc = counts[other]
                if oc > c || (oc == c && other < slot * 24 + hour) { ahead += 1 }
            }
            if ahead < cap { chosen.append((slot, c)) }
        }
        chosen.sort { $0.count != $1.count ? $0.count > $1.count : $0.slot < $1.slot }
        for (slot, _) in chosen where usedToday < cap {
            usedToday += 1
            fetches.append(PlannedFetch(app: apps[slot], reason: .hourly(hour: hour)))
        }
    }

    mutating func observe(_ event: DeviceEvent) {
        guard event.kind != .publish else { return }
        if offset != event.utcOffsetSeconds || nextWakeup == nil {
            offset = event.utcOffsetSeconds
            nextWakeup = Self.nextHourStart(after: event.time, offset: event.utcOffsetSeconds)
        }
        guard event.kind == .launch, let slot = apps.firstIndex(of: event.app) else { return }
        counts[slot * 24 + LocalTime.hourOfDay(time: event.time, utcOffsetSeconds: event.utcOffsetSeconds)] += 1
    }

    mutating func didFetch(app: Int32, at time: Double, result: FetchResult) {}
}
