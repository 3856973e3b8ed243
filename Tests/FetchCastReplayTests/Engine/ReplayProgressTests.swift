import FetchCastCore
import Foundation
import Testing
@testable import FetchCastReplay

/// `evaluate` says how far the replay has got and what is left, not only that it started.
struct ReplayProgressTests {
    @Test func theReplayReportsItsShareDoneAndTheRecordsToReplay() throws {
        let t = randomTrace(seed: 5, devices: 3)
        var lines: [String] = []
        let evaluation = try Evaluator.run(
            .events(t.events), options: EvaluationOptions(policies: ["interval", "learned"], budgets: [24], threads: 2),
            progress: { lines.append($0) })
        let replaying = lines.filter { $0.hasPrefix("replaying 3 devices × 2 policy runs: ") }
        #expect(!replaying.isEmpty, "\(lines)")
        // Before any record is replayed: 0% of every record of the three devices.
        #expect(replaying.first?.contains(": 0% of ") == true && replaying.first?.hasSuffix(" events") == true, "\(lines)")
        // The outputs do not depend on whether progress is reported.
        let quiet = try Evaluator.run(.events(t.events), options: EvaluationOptions(policies: ["interval", "learned"], budgets: [24], threads: 2))
        #expect(quiet.summary.map(\.metrics) == evaluation.summary.map(\.metrics))
    }

    @Test func theLineHasAnEstimateOnceThereIsSomethingToGoBy() {
        let p = ReplayProgress(total: 2_000_000, started: 100)
        #expect(p.line(devices: 14, runs: 10, now: 100.5) == "replaying 14 devices × 10 policy runs: 0% of 2.0M events")
        p.add(500_000)
        #expect(p.line(devices: 14, runs: 10, now: 130) == "replaying 14 devices × 10 policy runs: 25% of 2.0M events, about 1 min 30 s left")
        p.add(1_500_000)
        // Never 100% while replaying (records at one instant are counted together).
        #expect(!p.line(devices: 14, runs: 10, now: 140).contains("100%"))
    }

    @Test(arguments: [(0.4, "0 s"), (59.6, "1 min 0 s"), (200, "3 min 20 s"), (7500, "2 h 5 min")])
    func durationsAreReadable(seconds: Double, text: String) {
        #expect(ReplayProgress.duration(seconds) == text)
    }
}
