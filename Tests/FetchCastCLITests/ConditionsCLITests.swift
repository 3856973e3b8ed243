import FetchCastTestSupport
import Foundation
import Testing

/// Device conditions end to end: `conditions generate`, `state` rows through ingest and export,
/// `--constraints` on `predict` and `evaluate`.
struct ConditionsCLITests {
    /// d1 opens com.a at 08:00, 12:30 and 19:00 UTC for 14 days (with `follower`, com.b five
    /// minutes after each), with a `state` row at 18:59 on the last day.
    private func trace(finalNetwork: String, follower: Bool = false) -> String {
        var text = "time,device,app,event,result,bytes,duration_ms,network,power,battery,low_power\n"
        let start = 1_704_067_200  // 2024-01-01T00:00:00Z
        for day in 0..<14 {
            for minute in [480, 750, 1140] {
                if day == 13 && minute == 1140 {
                    // Just before the last launch: predict plans from the last launch, and reads the state then.
                    text += "\(start + day * 86_400 + 1139 * 60),d1,,state,,,,\(finalNetwork),battery,60,off\n"
                }
                text += "\(start + day * 86_400 + minute * 60),d1,com.a,launch,,,,,,,\n"
                if follower { text += "\(start + day * 86_400 + minute * 60 + 300),d1,com.b,launch,,,,,,,\n" }
            }
        }
        return text
    }

    @Test func generatesTheSameLayerForTheSameSeedAndItIngests() throws {
        let w = try Workspace()
        try w.write("t.csv", trace(finalNetwork: "wifi").split(separator: "\n").filter { !$0.contains(",state,") }
            .map { $0.split(separator: ",", omittingEmptySubsequences: false).prefix(7).joined(separator: ",") }.joined(separator: "\n") + "\n")
        let a = try w.run(["conditions", "generate", "t.csv", "--seed", "5", "--out", "a.csv"])
        #expect(a.status == 0, "\(a.err)")
        #expect(a.err.contains("42 events and"))
        #expect(try w.run(["conditions", "generate", "t.csv", "--seed", "5", "--out", "b.csv"]).status == 0)
        let bytesA = try Data(contentsOf: URL(fileURLWithPath: w.path("a.csv")))
        #expect(bytesA == (try Data(contentsOf: URL(fileURLWithPath: w.path("b.csv")))))
        #expect(try w.run(["ingest", "a.csv"]).status == 0)
        struct Row: Decodable { var event: String; var network: String?; var power: String? }
        let rows = try w.run(["export", "events", "--format", "json"]).jsonLines(Row.self)
        #expect(rows.filter { $0.event == "launch" }.count == 42)
        let states = rows.filter { $0.event == "state" }
        #expect(!states.isEmpty && states.first?.network != nil && states.first?.power != nil)
        let bad = try w.run(["conditions", "generate", "t.csv", "--evening-wifi-probability", "2"])
        #expect(bad.status == 64)
        #expect(bad.err.contains("--evening-wifi-probability is 2.0 (expected a probability from 0 to 1)"))
    }

    @Test func refusesABadConstraintsFileNamingTheKey() throws {
        let w = try Workspace()
        try w.write("t.csv", trace(finalNetwork: "wifi"))
        try w.write("c.json", #"{"apps": {"*": {"network": "metered"}}}"#)
        for command in [["evaluate", "t.csv", "--out", "out"], ["predict"]] {
            if command[0] == "predict" { #expect(try w.run(["ingest", "t.csv"]).status == 0) }
            let r = try w.run(command + ["--constraints", "c.json"])
            #expect(r.status == 1)
            #expect(r.err.contains("c.json: apps.*.network: \"metered\" is not a network requirement (expected \"any\" or \"unmetered\")"), "\(r.err)")
            #expect(r.out.isEmpty)
        }
        #expect(!FileManager.default.fileExists(atPath: w.path("out/summary.csv")))
    }

    @Test(arguments: [("wifi", true), ("cellular", false)])
    func predictPlansOnlyWhereTheLastKnownConditionsAllow(network: String, plans: Bool) throws {
        let w = try Workspace()
        try w.write("t.csv", trace(finalNetwork: network, follower: true))
        try w.write("c.json", #"{"apps": {"*": {"network": "unmetered"}}}"#)
        #expect(try w.run(["ingest", "t.csv"]).status == 0)
        // One second after the last launch of com.a: com.b, opened five minutes after it every
        // time, is worth fetching at once, under the conditions the 18:59 row set.
        let at = ["--at", "2024-01-14T19:00:01Z"]
        let free = try w.run(["predict", "--device", "d1", "--format", "csv"] + at)
        #expect(free.status == 0)
        #expect(free.out.split(separator: "\n").count > 1, "no plan without constraints: \(free.out)")
        let constrained = try w.run(["predict", "--device", "d1", "--format", "csv", "--constraints", "c.json"] + at)
        #expect(constrained.status == 0)
        #expect((constrained.out.split(separator: "\n").count > 1) == plans, "\(constrained.out)")
        // --system ios alone: battery 60 %, Low Power Mode off: plans as without constraints.
        let ios = try w.run(["predict", "--device", "d1", "--format", "csv", "--system", "ios"] + at)
        #expect(ios.out == free.out)
    }

    @Test func evaluateAppendsTheConditionColumnsOnlyWhenConditionsAreInvolved() throws {
        let w = try Workspace()
        try w.write("t.csv", trace(finalNetwork: "wifi"))
        let plain = String(trace(finalNetwork: "wifi").split(separator: "\n").filter { !$0.contains(",state,") }.joined(separator: "\n")) + "\n"
        try w.write("plain.csv", plain)
        #expect(try w.run(["evaluate", "plain.csv", "--policies", "interval", "--budgets", "24", "--out", "p"]).status == 0)
        #expect(try w.run(["evaluate", "t.csv", "--policies", "interval", "--budgets", "24", "--out", "s"]).status == 0)
        let p = try String(contentsOfFile: w.path("p/summary.csv"), encoding: .utf8)
        let s = try String(contentsOfFile: w.path("s/summary.csv"), encoding: .utf8)
        #expect(!p.contains("battery_joules_per_device_day"))
        #expect(s.split(separator: "\n")[0].hasSuffix(",battery_joules_per_device_day,cellular_fetches_per_device_day,cellular_bytes_per_device_day,offline_fetches,blocked_fetches,deferred_fetches"))
        let run = try String(contentsOfFile: w.path("s/run.json"), encoding: .utf8)
        #expect(run.contains("\"semantics\" : \"v2\""))
        #expect(try String(contentsOfFile: w.path("p/run.json"), encoding: .utf8).contains("\"semantics\" : \"v1\""))
    }
}
