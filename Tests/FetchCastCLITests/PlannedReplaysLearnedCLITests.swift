import Foundation
import Testing

/// One scheduler: a client that asks for a plan after every event it sees (its own fetches'
/// results included) fetches exactly what the live policy fetches. `planned` with
/// `--replan-on-event` and `learned` make the same fetches, at the same instants, for the same
/// reasons, with and without device conditions, with and without constraints.
struct PlannedReplaysLearnedCLITests {
    @Test(arguments: PlannedMatchesPredictCLITests.traces)
    func plannedAskingAfterEveryEventFetchesWhatLearnedFetches(setup: String) throws {
        let w = try Workspace()
        let (trace, constraints) = try PlannedMatchesPredictCLITests.setUp(setup, in: w)
        let sample = PlannedMatchesPredictCLITests.data.appendingPathComponent(trace).path
        try w.write("devices.txt", "19_F\n20_M\n1_M\n")
        let r = try w.run([
            "evaluate", sample, "--devices", "devices.txt", "--policies", "learned,planned", "--replan-on-event",
            "--budgets", "12,24", "--detail", "--quiet", "--out", "out",
        ] + constraints)
        try #require(r.status == 0, "\(r.err)")
        if !constraints.isEmpty {
            // Both keep to the constraints themselves: the replay drops none of their fetches.
            let summary = try PlannedMatchesPredictCLITests.lines(w.path("out/summary.csv"))
            let blocked = summary[0].split(separator: ",").firstIndex(of: "blocked_fetches")
            try #require(blocked != nil && summary.count == 5)
            for row in summary.dropFirst() { #expect(row.split(separator: ",", omittingEmptySubsequences: false)[blocked!] == "0", "\(row)") }
        }
        // policy,budget,device,fetch_id,app,time,result,wakeup,joules,reason
        let rows = try PlannedMatchesPredictCLITests.lines(w.path("out/fetches.csv.gz")).dropFirst()
        func fetches(of policy: String) -> [Substring] {
            rows.filter { $0.hasPrefix(policy + ",") }.map { $0.dropFirst(policy.count + 1) }
        }
        let learned = fetches(of: "learned"), planned = fetches(of: "planned")
        #expect(learned.count > 1000)
        #expect(planned == learned)
    }
}
