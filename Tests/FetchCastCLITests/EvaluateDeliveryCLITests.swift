import Foundation
import Testing

/// `evaluate --delivery` end to end: the push flags are usage errors without a push service, a
/// push service writes `delivery.csv` and its table, and `--delivery direct` writes exactly what
/// a run without the flag writes.
struct EvaluateDeliveryCLITests {
    /// One device: `a` launched every 20 minutes for a day, `b` every 3 hours.
    static func trace() -> String {
        var lines = ["time,device,app,event"]
        var events: [(Int, String)] = []
        for m in stride(from: 0, to: 24 * 60, by: 20) { events.append((m * 60, "a")) }
        for m in stride(from: 5, to: 24 * 60, by: 180) { events.append((m * 60, "b")) }
        for (s, app) in events.sorted(by: { $0.0 < $1.0 }) {
            let t = Date(timeIntervalSince1970: 1_704_067_200 + Double(s))
            lines.append("\(t.ISO8601Format()),phone,\(app),launch")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    @Test(arguments: [
        (["--push-ttl", "1h"], "--push-ttl sets how a push service delivers; give --delivery apns or --delivery fcm too."),
        (["--keep-alive", "10m"], "--keep-alive sets how a push service delivers"),
        (["--delivery", "apns", "--doze-after", "1h"], "--doze-after is FCM's doze; give it with --delivery fcm"),
        (["--delivery", "apns", "--push-per-hour", "0"], "--push-per-hour must be between 0.1 and 3600, pushes an hour (got 0"),
        (["--delivery", "fcm", "--push-burst", "0"], "--push-burst must be between 1 and 1000 (got 0)"),
        (["--delivery", "fcm", "--push-ttl", "30d"], "--push-ttl must be between 1 and 2419200"),
        (["--delivery", "apns", "--keep-alive", "soon"], "--keep-alive 'soon' is not a duration"),
        (["--delivery", "carrier-pigeon"], "carrier-pigeon"),
    ])
    func pushFlagsAreCheckedBeforeAnyWork(flags: [String], message: String) throws {
        let w = try Workspace()
        let r = try w.run(["evaluate", "t.csv", "--out", "o"] + flags)
        #expect(r.status == 64, "\(flags): \(r.err)")
        #expect(r.err.contains(message), "\(flags): \(r.err)")
        #expect(r.out.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: w.path("o")))
    }

    @Test func aPushServiceWritesDeliveryCSVAndDirectChangesNothing() throws {
        let w = try Workspace()
        try w.write("t.csv", Self.trace())
        let policies = ["--policies", "interval,learned", "--budgets", "24", "--threads", "1"]
        let plain = try w.run(["evaluate", "t.csv", "--out", "plain"] + policies)
        #expect(plain.status == 0, "\(plain.err)")
        let direct = try w.run(["evaluate", "t.csv", "--out", "direct", "--delivery", "direct"] + policies)
        #expect(direct.status == 0, "\(direct.err)")
        #expect(direct.err == plain.err.replacingOccurrences(of: "plain/", with: "direct/"))
        for name in ["summary.csv", "devices.csv", "slices.csv", "run.json"] {
            #expect(FileManager.default.contents(atPath: w.path("direct/" + name)) == FileManager.default.contents(atPath: w.path("plain/" + name)), "\(name)")
        }
        #expect(!FileManager.default.fileExists(atPath: w.path("direct/delivery.csv")))

        // APNs lets 2 an hour through per app: `interval` at 24 a day over 2 apps asks once an
        // hour per app, so nothing is held; at 240 a day it asks every 12 minutes.
        let apns = try w.run(["evaluate", "t.csv", "--out", "apns", "--delivery", "apns", "--policies", "interval,learned", "--budgets", "240", "--threads", "1"])
        #expect(apns.status == 0, "\(apns.err)")
        #expect(apns.err.contains("pushes through apns per device-day, and the delivery delay in minutes (delivery.csv):"))
        #expect(apns.err.contains("wrote apns/summary.csv, devices.csv, slices.csv, run.json, delivery.csv"))
        let csv = try String(contentsOfFile: w.path("apns/delivery.csv"), encoding: .utf8).split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        #expect(csv.count == 2 && csv[1][0] == "interval" && csv[1][2] == "apns")  // learned does not push
        let column = Dictionary(uniqueKeysWithValues: csv[0].enumerated().map { (String($0.element), $0.offset) })
        let sent = Int(csv[1][column["pushes_sent"]!])!, delivered = Int(csv[1][column["pushes_delivered"]!])!
        let collapsed = Int(csv[1][column["pushes_collapsed"]!])!, dropped = Int(csv[1][column["pushes_dropped"]!])!
        #expect(sent > delivered && collapsed > 0)
        #expect(sent == delivered + collapsed + dropped)
    }
}
