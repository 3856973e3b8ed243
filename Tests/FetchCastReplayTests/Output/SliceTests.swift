import FetchCastTrace
import Foundation
import Testing
@testable import FetchCastReplay

/// `slices.csv`: needy launches split by how long the whole device had been silent before them,
/// on a hand-computed trace (τ 30 min; only `x` is fetch-enabled, `y` is a launch of the device).
struct SliceTests {
    /// x at 0 (not scored); x 3600 (needy, device silent 3600 s: 30min-2h, fresh from the fetch
    /// at 3500); y 9000; x 10000 (needy, silent 1000 s since y: warm, not fresh); x 17200 (needy,
    /// silent exactly 7200 s: first pickup, fresh from the fetch at 17000); x 19000 (1800 s after
    /// x: not needy); x 20801 (needy, silent 1801 s: 30min-2h); y 22000; x 23800 (needy, silent
    /// exactly 1800 s: 30min-2h).
    private func trace() -> Trace {
        var t = Trace()
        for s in [0.0, 3600, 10_000, 17_200, 19_000, 20_801, 23_800] { t.launch("x", at: s) }
        t.launch("y", at: 9000)
        t.launch("y", at: 22_000)
        t.events.sort { $0.timeMicros < $1.timeMicros }
        return t
    }

    @Test func needyLaunchesAreSlicedByTheDeviceSilenceBeforeThem() throws {
        let t = trace()
        let e = try evaluate(t, policies: ["scripted"], topApps: 1, registry: scripted(t, [(3500, "x"), (17_000, "x")]))
        let s = e.row("scripted").slices
        #expect(s.needy == [1, 3, 1])
        #expect(s.freshNeedy == [0, 1, 1])
        #expect(e.row("scripted").needyLaunches == 5 && e.row("scripted").freshNeedyLaunches == 2)
    }

    @Test func slicesCSVHasOneRowPerPolicyBudgetAndSlice() throws {
        let dir = NSTemporaryDirectory() + "fetchcast-slices-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let t = trace()
        var options = EvaluationOptions(policies: ["none", "scripted"], budgets: [24])
        options.topApps = 1
        _ = try Evaluator.run(
            .events(t.events), options: options, registry: scripted(t, [(3500, "x"), (17_000, "x")]), outputDirectory: dir)
        let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: "\(dir)/slices.csv")), as: UTF8.self)
        #expect(text == """
            policy,budget,slice,silence_from_s,silence_to_s,needy_launches,fresh_needy_launches,hit_rate
            none,0,warm,0,1800,1,0,0.000000
            none,0,30min-2h,1800,7200,3,0,0.000000
            none,0,first_pickup,7200,,1,0,0.000000
            scripted,24,warm,0,1800,1,0,0.000000
            scripted,24,30min-2h,1800,7200,3,1,0.333333
            scripted,24,first_pickup,7200,,1,1,1.000000

            """)
    }
}
