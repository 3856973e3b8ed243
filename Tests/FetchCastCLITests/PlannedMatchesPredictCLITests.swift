import FetchCastCore
import FetchCastTrace
import Foundation
import Testing

/// What we serve is what we measure: the plans the `planned` policy followed in a replay are
/// exactly what `fetchcast predict --at T --format json` answers from a store holding the same
/// events before T (the trace's launches and the fetch results the policy's client reported).
///
/// Each device is replayed and stored on its own: a device's population prior comes from the
/// other devices, and in the store those devices' events would include their own policy's
/// fetches, which a replay's prior cannot know before it has run.
struct PlannedMatchesPredictCLITests {
    struct PredictionRecord: Decodable {
        var app: String
        var fetch_at_unix: Double
        var launch_probability: Double
        var new_data_probability: Double
        var reason: String
    }

    static let data = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Data")
    /// The bundled sample; the same launches with its generated `state` layer (device
    /// conditions: plans then count on the device's usual Wi-Fi and charging hours); and that
    /// layer with every app's fetches constrained to Wi-Fi (`+unmetered`: `--constraints`, which
    /// the scheduler keeps to, live and in plans).
    static let traces = ["ubiqlog-sample.csv.gz", "ubiqlog-sample-conditions.csv.gz", "ubiqlog-sample-conditions.csv.gz+unmetered"]

    /// The trace of one of ``traces``, and the `--constraints` arguments it names (the file
    /// written to `w`).
    static func setUp(_ setup: String, in w: Workspace) throws -> (trace: String, constraints: [String]) {
        let parts = setup.split(separator: "+").map(String.init)
        guard parts.count > 1 else { return (parts[0], []) }
        try w.write("c.json", #"{"apps": {"*": {"network": "unmetered"}}}"#)
        return (parts[0], ["--constraints", "c.json"])
    }

    /// The lines of a gzip or plain text file.
    static func lines(_ path: String) throws -> [Substring] {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", "gzip -dcf \"$0\"", path]
        let pipe = Pipe()
        p.standardOutput = pipe
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        try #require(p.terminationStatus == 0, "cannot read \(path)")
        return String(decoding: data, as: UTF8.self).split(separator: "\n")
    }

    /// One device of a trace replayed by `planned` (replanning on events, `--detail`), and a
    /// store holding the trace's events with the fetches the policy's client reported.
    struct Replayed {
        var workspace: Workspace
        /// The fetch-enabled apps: the 5 most launched, ties by id (replay semantics rule 1).
        var apps: [String]
        /// The policy's fetches (time, app), in time order.
        var made: [(time: Double, app: String)]
        /// Plans by the time they were asked for: planned_at,app,fetch_at,fetch_at_unix,p_launch,p_new,…
        var plans: [String: [[String]]]
        /// The plans' times, in the order they were asked for.
        var order: [String]
    }

    static func replay(_ device: String, of trace: String, in w: Workspace, flags: [String]) throws -> Replayed {
        let sample = try Self.lines(Self.data.appendingPathComponent(trace).path)
        let header = String(sample[0])
        let extraColumns = String(repeating: ",", count: header.filter { $0 == "," }.count - 6)
        let rows = sample.dropFirst().filter { $0.split(separator: ",", omittingEmptySubsequences: false)[1] == device }
        try #require(rows.count > 500)
        try w.write("trace.csv", ([header] + rows.map(String.init)).joined(separator: "\n") + "\n")
        let replay = try w.run([
            "evaluate", "trace.csv", "--policies", "planned", "--budgets", "24", "--replan-on-event", "--detail", "--quiet",
            "--out", "out",
        ] + flags)
        try #require(replay.status == 0, "\(replay.err)")

        // The policy's fetches, as its client would report them: fetch rows, before the
        // launches at the same instant (the replay makes a wakeup's fetches before them).
        var events: [(time: Double, order: Int, line: String)] = rows.map { row in
            (Timestamp.parseArgument(String(row.prefix { $0 != "," }))!, 1, String(row))
        }
        let fetches = try Self.lines(w.path("out/fetches.csv.gz")).dropFirst()
        try #require(!fetches.isEmpty)
        var made: [(time: Double, app: String)] = []
        for f in fetches {
            let c = f.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            // policy,budget,device,fetch_id,app,time,result,...
            events.append((Timestamp.parseArgument(c[5])!, 0, "\(c[5]),\(c[2]),\(c[4]),fetch,\(c[6]),,\(extraColumns)"))
            made.append((Timestamp.parseArgument(c[5])!, c[4]))
        }
        events.sort { ($0.time, $0.order) < ($1.time, $1.order) }
        try w.write("reported.csv", ([header] + events.map(\.line)).joined(separator: "\n") + "\n")
        let ingest = try w.run(["ingest", "reported.csv", "--db", "store.sqlite"])
        try #require(ingest.status == 0, "\(ingest.err)")

        var launches: [String: Int] = [:]
        for row in rows {
            let c = row.split(separator: ",", omittingEmptySubsequences: false)
            if c[3] == "launch" { launches[String(c[2]), default: 0] += 1 }
        }
        let apps = launches.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.prefix(5).map(\.key)

        var plans: [String: [[String]]] = [:]
        var order: [String] = []
        for line in try Self.lines(w.path("out/plans.csv.gz")).dropFirst() {
            let c = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            if plans[c[3]] == nil { order.append(c[3]) }
            plans[c[3], default: []].append(Array(c[3...]))
        }
        return Replayed(workspace: w, apps: apps, made: made, plans: plans, order: order)
    }

    @Test(arguments: Self.traces, ["19_F", "20_M", "1_M"])
    func predictAnswersThePlanThePlannedPolicyFollowed(setup: String, device: String) throws {
        let w = try Workspace()
        let (trace, constraints) = try Self.setUp(setup, in: w)
        let replayed = try Self.replay(device, of: trace, in: w, flags: constraints)
        let (apps, plans, order) = (replayed.apps, replayed.plans, replayed.order)
        try #require(order.count > 100, "the policy asked for plans")
        // Four moments spread over the replay, each asked of the CLI.
        for at in stride(from: order.count / 5, to: order.count, by: order.count / 5).prefix(4).map({ order[$0] }) {
            let expected = plans[at]!
            let r = try w.run(
                ["predict", "--db", "store.sqlite", "--device", device, "--at", at, "--budget", "24", "--count", "1000", "--format", "json"]
                    + apps.flatMap { ["--app", $0] } + constraints)
            #expect(r.status == 0, "\(r.err)")
            let got = try r.out.split(separator: "\n").map { try JSONDecoder().decode(PredictionRecord.self, from: Data($0.utf8)) }
            #expect(got.count == expected.count, "at \(at): predict lists \(got.count), the policy's plan \(expected.count)")
            for (g, e) in zip(got, expected) {
                #expect(g.app == e[1], "at \(at)")
                #expect(abs(g.fetch_at_unix - Double(e[3])!) < 1e-6, "at \(at): \(g.fetch_at_unix) vs \(e[3])")
                #expect(abs(g.launch_probability - Double(e[4])!) < 5e-7, "at \(at)")
                #expect(abs(g.new_data_probability - Double(e[5])!) < 5e-7, "at \(at)")
                // The usual condition a fetch counts on is named alike in both.
                let note = e.last!.range(of: "; usually ").map { String(e.last![$0.lowerBound...]) }
                #expect(note.map { g.reason.hasSuffix($0) } ?? !g.reason.contains("; usually "), "at \(at): \(g.reason) vs \(e.last!)")
            }
        }
    }

    /// Through a push service the same holds for what is sent: `predict --delivery apns` at a
    /// plan's time lists the fetches of that plan the backend sends (`send_at`), and those due
    /// before the policy's next plan are exactly the fetches the replay made through APNs (a
    /// throttle of one push every 2 hours, so that some fetches are left out).
    @Test func predictThroughAPushServiceAnswersThePushesThePlannedPolicySent() throws {
        let w = try Workspace()
        let device = "19_F"
        let push = ["--delivery", "apns", "--push-per-hour", "0.5"]
        let replayed = try Self.replay(device, of: "ubiqlog-sample.csv.gz", in: w, flags: push)
        let (apps, made, plans, order) = (replayed.apps, replayed.made, replayed.plans, replayed.order)
        try #require(order.count > 100)
        var leftOut = 0
        var compared = 0
        for i in stride(from: 7, to: order.count - 1, by: max(1, order.count / 40)) {
            let at = order[i]
            let (start, next) = (Timestamp.parseArgument(at)!, Timestamp.parseArgument(order[i + 1])!)
            let r = try w.run(
                ["predict", "--db", "store.sqlite", "--device", device, "--at", at, "--budget", "24", "--count", "1000", "--format", "json"]
                    + apps.flatMap { ["--app", $0] } + push)
            #expect(r.status == 0, "\(r.err)")
            let got = try r.out.split(separator: "\n").map { try JSONDecoder().decode(PushRecord.self, from: Data($0.utf8)) }
            let plan = plans[at]!.map { ($0[1], Double($0[3])!) }
            // A subset of the plan, in its order, each sent at its fetch time.
            var rest = plan[...]
            for g in got {
                guard let k = rest.firstIndex(where: { $0.0 == g.app && abs($0.1 - g.fetch_at_unix) < 1e-6 }) else {
                    Issue.record("at \(at): \(g.app) at \(g.fetch_at_unix) is not in the plan")
                    continue
                }
                rest = rest[(k + 1)...]
                #expect(g.send_at_unix == max(g.fetch_at_unix, start) && g.pushes_left_this_hour >= 0)
            }
            leftOut += plan.count - got.count
            // What the replay fetched before the next plan is what predict said to send.
            let sent = got.filter { $0.send_at_unix < next }.map { "\($0.app)@\(Int(($0.send_at_unix * 1000).rounded()))" }
            let fetched = made.filter { $0.time >= start && $0.time < next }.map { "\($0.app)@\(Int(($0.time * 1000).rounded()))" }
            #expect(sent == fetched, "at \(at)")
            compared += sent.count
        }
        #expect(leftOut > 0 && compared > 0, "the throttle leaves fetches out (\(leftOut)) and pushes are compared (\(compared))")
    }

    struct PushRecord: Decodable {
        var app: String
        var fetch_at_unix: Double
        var send_at_unix: Double
        var pushes_left_this_hour: Int
    }
}
