import FetchCastCore
import FetchCastModel
import FetchCastTrace
import FetchCastTestSupport

/// A fetch a driven policy made.
struct MadeFetch: Equatable {
    var app: Int32
    var time: Double
}

/// Drives a policy over events (in time order) with the protocol's ordering contract,
/// ``InstantOrder``: at one instant, publishes, then `state` rows (none here), then wakeups,
/// then launches and fetches. Every fetch returns `result(app, time)`.
func drive<P: FetchPolicy>(
    _ policy: inout P, events: [DeviceEvent], until end: Double,
    result: (Int32, Double) -> FetchResult = { _, _ in .newData }
) -> [MadeFetch] {
    var made: [MadeFetch] = []
    var planned: [PlannedFetch] = []
    func wakeAll(before limit: Double, inclusive: Bool) {
        while let w = policy.nextWakeup, inclusive ? w <= limit : w < limit {
            planned.removeAll()
            policy.wake(at: w, into: &planned)
            for p in planned {
                made.append(MadeFetch(app: p.app, time: w))
                policy.didFetch(app: p.app, at: w, result: result(p.app, w))
            }
            if let next = policy.nextWakeup, next <= w { break }
        }
    }
    var arranged = events
    InstantOrder.arrange(&arranged, time: \.time, step: { InstantOrder.step(of: $0.kind) })
    for e in arranged {
        wakeAll(before: e.time, inclusive: !InstantOrder.precedesLooks(e.kind))
        policy.observe(e)
    }
    wakeAll(before: end, inclusive: true)
    return made
}

/// A random but habit-shaped week-long trace: each app has favourite hours, bursts of use.
func habitTrace(seed: UInt64, days: Int = 14, apps: Int32 = 6, offset: Int32 = 3600, start: Double = 1_700_000_000) -> [DeviceEvent] {
    var rng = SeededGenerator(seed: seed)
    var events: [DeviceEvent] = []
    let favourites = (0..<apps).map { _ in Double(Int.random(in: 7...22, using: &rng)) }
    for day in 0..<days {
        let dayStart = start + Double(day) * 86_400
        for app in 0..<apps {
            let sessions = Int.random(in: 1...5, using: &rng)
            for _ in 0..<sessions {
                let hour = favourites[Int(app)] + Double.random(in: -1.5...1.5, using: &rng)
                let t = dayStart + hour * 3600 - Double(offset) + Double.random(in: 0...600, using: &rng)
                events.append(DeviceEvent(time: t.rounded(), utcOffsetSeconds: offset, app: app, kind: .launch))
                if Bool.random(using: &rng) {
                    let other = Int32.random(in: 0..<apps, using: &rng)
                    events.append(DeviceEvent(time: t.rounded() + Double.random(in: 5...900, using: &rng).rounded(),
                                              utcOffsetSeconds: offset, app: other, kind: .launch))
                }
            }
        }
    }
    return events.sorted { ($0.time, $0.app) < ($1.time, $1.app) }
}
