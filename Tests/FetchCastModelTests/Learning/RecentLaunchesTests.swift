import FetchCastCore
import Foundation
import Testing

@testable import FetchCastModel

/// ``RecentLaunches`` keeps exactly what the list it replaced kept (`removeAll { t − time > τ }`
/// then `append`), in the same order, in time order or not: results do not change.
struct RecentLaunchesTests {
    typealias Launch = DeviceModel.RecentLaunch

    /// Times mostly increasing with bursts (many launches a second) and, with `late`, some events
    /// earlier than the last one.
    static func times(count: Int, late: Bool, seed: UInt64) -> [Double] {
        var rng = SeededGenerator(seed: seed)
        var t = 1_700_000_000.0
        return (0..<count).map { _ in
            let r = rng.next() % 100
            if late && r < 5 { return t - Double(rng.next() % 4000) }
            t += r < 60 ? Double(rng.next() % 1000) / 1000 : Double(rng.next() % 3600)
            return t
        }
    }

    @Test(arguments: [(false, UInt64(1)), (false, 2), (true, 3), (true, 4)])
    func keepsWhatAScanKeptInTheSameOrder(late: Bool, seed: UInt64) {
        let tau = 1800.0
        var reference: [Launch] = []
        var recent = RecentLaunches()
        for (i, t) in Self.times(count: 5_000, late: late, seed: seed).enumerated() {
            reference.removeAll { t - $0.time > tau }
            recent.removeExpired(at: t, tau: tau)
            let launch = Launch(time: t, app: Int32(i % 7), weight: Double(i), idle: i % 2)
            reference.append(launch)
            recent.append(launch)
            #expect(recent.map(\.time) == reference.map(\.time) && recent.map(\.weight) == reference.map(\.weight))
            let probe = t - Double(i % 50)
            var best: Double?
            for r in reference where r.time < probe { best = max(best ?? r.time, r.time) }
            #expect(recent.latest(before: probe) == best)
        }
    }

    @Test func encodesAsTheArrayItReplaced() throws {
        var recent = RecentLaunches()
        for i in 0..<5 { recent.append(Launch(time: Double(10 - i), app: Int32(i), weight: 1, idle: 0)) }
        let data = try JSONEncoder().encode(recent)
        #expect(try JSONDecoder().decode([Launch].self, from: data).map(\.time) == [10, 9, 8, 7, 6])
        let back = try JSONDecoder().decode(RecentLaunches.self, from: data)
        #expect(back.map(\.time) == [10, 9, 8, 7, 6])
        #expect(back.latest(before: 9.5) == 9)
    }
}
