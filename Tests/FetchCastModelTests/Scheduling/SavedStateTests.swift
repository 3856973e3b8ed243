import FetchCastCore
@testable import FetchCastModel
import Testing

/// A scheduler's saved state (binary, format 3) restores every part of it: a restored policy
/// saves the same bytes and goes on exactly as the one it was saved from; damaged or foreign
/// bytes are refused.
struct SavedStateTests {
    /// A live policy two weeks into a habit trace, with failed fetches (retries), conditions
    /// (habits, an open state) and pending forecasts; and a following one told of the same events.
    private static func policies(seed: UInt64) -> (live: LearnedPolicy, following: LearnedPolicy, events: [DeviceEvent]) {
        let events = habitTrace(seed: seed)
        var live = LearnedPolicy(apps: [0, 1, 2, 3, 4, 5], model: DeviceModel(), configuration: SchedulerConfiguration(budget: 12), prior: .none)
        var following = LearnedPolicy(
            apps: [0, 2, 4], model: DeviceModel(), configuration: SchedulerConfiguration(budget: 6), prior: .none, mode: .following)
        let half = events.count / 2
        for (i, e) in events[..<half].enumerated() where i % 40 == 0 {
            let conditions = DeviceConditions(network: i % 80 == 0 ? .wifi : .cellular, power: .battery, battery: UInt8(90 - i % 50), lowPower: false)
            live.observeConditions(conditions, at: e.time - 1, utcOffsetSeconds: e.utcOffsetSeconds)
            following.observeConditions(conditions, at: e.time - 1, utcOffsetSeconds: e.utcOffsetSeconds)
        }
        _ = drive(&live, events: Array(events[..<half]), until: events[half].time - 1) { app, t in
            Int(t) % 3 == 0 ? .failed : (app % 2 == 0 ? .newData : .noData)
        }
        for e in events[..<half] { following.observe(e) }
        return (live, following, Array(events[half...]))
    }

    @Test(arguments: [41 as UInt64, 42])
    func aRestoredPolicySavesTheSameBytesAndGoesOnTheSame(seed: UInt64) throws {
        var (live, following, rest) = Self.policies(seed: seed)
        _ = following
        #expect(!live.retries.isEmpty || !live.lastFetch.isEmpty)
        #expect(live.conditions != nil && !live.habits.isEmpty)
        #expect(live.calibration.outcome(of: 0.3, reacting: true) != nil, "outcome lines to save")
        for original in [live, following] {
            let bytes = try original.savedState()
            let restored = try LearnedPolicy(restoring: bytes)
            #expect(try restored.savedState() == bytes)
            #expect(restored.mode == original.mode && restored.apps == original.apps)
            if original.mode == .following {
                #expect(restored.plan(from: rest[0].time) == original.plan(from: rest[0].time))
            }
        }
        var restored = try LearnedPolicy(restoring: try live.savedState())
        let end = rest.last!.time + 86_400
        #expect(drive(&restored, events: rest, until: end) == drive(&live, events: rest, until: end))
    }

    @Test func damagedOrForeignBytesAreRefused() throws {
        let bytes = try Self.policies(seed: 43).live.savedState()
        #expect(throws: (any Error).self) { try LearnedPolicy(restoring: Array(bytes.dropLast())) }
        #expect(throws: (any Error).self) { try LearnedPolicy(restoring: bytes + [0]) }
        #expect(throws: (any Error).self) { try LearnedPolicy(restoring: Array(#"{"version":1}"#.utf8)) }
        var wrongVersion = bytes
        wrongVersion[4] += 1  // a format this build does not know
        #expect(throws: (any Error).self) { try LearnedPolicy(restoring: wrongVersion) }
        #expect(throws: (any Error).self) { try LearnedPolicy(restoring: []) }
    }
}
