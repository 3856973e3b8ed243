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

    /// Six weeks of news at 08:00 and chat at 12:30 and 21:10 on device `r`, each day with the
    /// `state` rows given as (minutes after local midnight, network, power).
    static func sixWeeks(states: [(minutes: Int, network: String, power: String)]) -> String {
        var rows = ["time,device,app,event,result,bytes,duration_ms,network,power,battery,low_power"]
        let start = 1_709_506_800  // Monday 2024-03-04 00:00 at UTC+01:00
        func time(_ day: Int, _ minutes: Int) -> String {
            let t = Date(timeIntervalSince1970: TimeInterval(start + day * 86_400 + minutes * 60 + 3600))
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            let c = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: t)
            return String(format: "%04d-%02d-%02dT%02d:%02d:00+01:00", c.year!, c.month!, c.day!, c.hour!, c.minute!)
        }
        for day in 0..<42 {
            var items = states.map { ($0.minutes, "r,,state,,,,\($0.network),\($0.power),80,off") }
            items += [(8 * 60, "r,news,launch,,,60000,,,,"), (12 * 60 + 30, "r,chat,launch,,,60000,,,,"), (21 * 60 + 10, "r,chat,launch,,,60000,,,,")]
            for (minutes, rest) in items.sorted(by: { $0.0 < $1.0 }) { rows.append("\(time(day, minutes)),\(rest)") }
        }
        return rows.joined(separator: "\n") + "\n"
    }

    /// `learned` and `planned --replan-on-event` on `trace` at cap 24 (with `constraints` when
    /// given): each one's fetches as `budget,device,fetch_id,app,time,…` lines.
    static func learnedAndPlanned(_ w: Workspace, trace: String, constraints: String? = nil) throws -> (learned: [Substring], planned: [Substring]) {
        try w.write("t.csv", trace)
        var arguments = ["evaluate", "t.csv", "--policies", "learned,planned", "--replan-on-event", "--budgets", "24", "--detail", "--quiet", "--out", "out"]
        if let constraints {
            try w.write("c.json", constraints)
            arguments += ["--constraints", "c.json"]
        }
        let r = try w.run(arguments)
        try #require(r.status == 0, "\(r.err)")
        // policy,budget,device,fetch_id,app,time,result,wakeup,joules,reason
        let fetched = try PlannedMatchesPredictCLITests.lines(w.path("out/fetches.csv.gz")).dropFirst()
        func fetches(of policy: String) -> [Substring] {
            fetched.filter { $0.hasPrefix(policy + ",") }.map { $0.dropFirst(policy.count + 1) }
        }
        return (fetches(of: "learned"), fetches(of: "planned"))
    }

    /// A habit under constraints: a look ahead the constraints refuse waits for a `state` row
    /// that allows it (docs/model.md, known limits). A plan cannot know when that row comes, and
    /// a client asking after every event (the row included) still fetches exactly what the live
    /// policy fetches.
    @Test func aLookAheadWaitingForWiFiIsFetchedByPlannedAsByLearned() throws {
        // Cellular from 07:00, Wi-Fi from 07:50 (the look at 07:30 is refused) and from 18:00.
        let trace = Self.sixWeeks(states: [(7 * 60, "cellular", "battery"), (7 * 60 + 50, "wifi", "battery"), (18 * 60, "wifi", "battery")])
        let (learned, planned) = try Self.learnedAndPlanned(
            try Workspace(), trace: trace, constraints: #"{"apps": {"*": {"network": "unmetered"}}}"#)
        #expect(planned == learned)
        // news is fetched at 07:50, when Wi-Fi comes, on most days after the first week.
        let atWiFi = learned.filter { $0.contains(",news,") && $0.contains("T07:50:00+01:00") }
        #expect(atWiFi.count >= 30, "\(atWiFi.count) of 42 days")
    }

    /// On a metered network on battery a look ahead waits, inside its half hour, for a cheaper
    /// moment (docs/model.md, "Anticipation meets conditions"): here a charger at 07:45. The
    /// plan a client gets after each event, the charger's `state` row included, fetches
    /// exactly what the live policy fetches.
    @Test func aLookAheadWaitingForTheChargerIsFetchedByPlannedAsByLearned() throws {
        let trace = Self.sixWeeks(states: [(0, "cellular", "battery"), (7 * 60 + 45, "cellular", "charging"), (9 * 60, "cellular", "battery")])
        let (learned, planned) = try Self.learnedAndPlanned(try Workspace(), trace: trace)
        #expect(planned == learned)
        let onCharger = learned.filter { $0.contains(",news,") && $0.contains("T07:45:00+01:00") }
        #expect(onCharger.count >= 30, "\(onCharger.count) of 42 days")
    }
}
