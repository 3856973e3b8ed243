import Foundation
import Testing

/// `evaluate --prior-from`: a population prior from other users, recorded in run.json.
struct EvaluatePriorCLITests {
    struct Manifest: Decodable {
        struct Parameters: Decodable {
            var prior_from: [String]?
            var prior_sha256: [String]?
            var prior_devices: [String]?
            var prior_pooled_devices: Int?
        }
        var parameters: Parameters
    }

    static func trace(devices: [String]) -> String {
        var rows = ["time,device,app,event"]
        for day in 1...9 {
            for d in devices {
                rows.append("2023-11-0\(day)T08:0\(day):00Z,\(d),mail,launch")
                rows.append("2023-11-0\(day)T08:2\(day):00Z,\(d),news,launch")
                rows.append("2023-11-0\(day)T19:0\(day):00Z,\(d),mail,launch")
            }
        }
        return rows.joined(separator: "\n") + "\n"
    }

    @Test func recordsThePriorsInputsAndDevices() throws {
        let w = try Workspace()
        try w.write("all.csv", Self.trace(devices: ["a", "b", "c"]))
        try w.write("train.txt", "a\nb\n")
        try w.write("test.txt", "c\n")
        let r = try w.run(["evaluate", "all.csv", "--devices", "test.txt", "--prior-from", "all.csv",
                           "--prior-devices", "train.txt", "--policies", "learned", "--budgets", "4", "--out", "out", "--quiet"])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.isEmpty)
        let manifest = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: URL(fileURLWithPath: w.path("out/run.json"))))
        #expect(manifest.parameters.prior_from == ["all.csv"])
        #expect(manifest.parameters.prior_devices == ["a", "b"])
        #expect(manifest.parameters.prior_pooled_devices == 2)
        #expect(manifest.parameters.prior_sha256?.first?.count == 64)
    }

    @Test func priorDevicesWithoutPriorFromIsAUsageError() throws {
        let w = try Workspace()
        try w.write("all.csv", Self.trace(devices: ["a"]))
        try w.write("train.txt", "a\n")
        let r = try w.run(["evaluate", "all.csv", "--prior-devices", "train.txt", "--out", "out"])
        #expect(r.status == 64)
        #expect(r.err.contains("--prior-from"))
    }

    @Test func aReplayedDeviceInThePopulationGetsAPriorFromTheOthersOnly() throws {
        let w = try Workspace()
        // Three devices with their own hours; the replayed one is part of --prior-from.
        var rows: [String] = []
        for day in 10...28 {
            for (d, hour) in [("a", 7), ("b", 12), ("c", 21)] {
                rows.append("2023-11-\(day)T\(hour < 10 ? "0" : "")\(hour):0\(day % 10):00Z,\(d),mail,launch")
                rows.append("2023-11-\(day)T\(hour < 10 ? "0" : "")\(hour):3\(day % 10):00Z,\(d),news,launch")
                rows.append("2023-11-\(day)T\(hour < 10 ? "0" : "")\(hour):4\(day % 10):00Z,\(d),chat,launch")
            }
        }
        try w.write("all.csv", (["time,device,app,event"] + rows.sorted()).joined(separator: "\n") + "\n")
        try w.write("a.txt", "a\n")
        try w.write("others.txt", "b\nc\n")
        let common = ["--devices", "a.txt", "--policies", "learned", "--budgets", "2,6", "--quiet"]
        let loo = try w.run(["evaluate", "all.csv", "--prior-from", "all.csv", "--out", "loo"] + common)
        let split = try w.run(["evaluate", "all.csv", "--prior-from", "all.csv", "--prior-devices", "others.txt", "--out", "split"] + common)
        let none = try w.run(["evaluate", "all.csv", "--out", "none"] + common)
        #expect(loo.status == 0 && split.status == 0 && none.status == 0, "\(loo.err) \(split.err) \(none.err)")
        let looRows = try String(contentsOfFile: w.path("loo/devices.csv"), encoding: .utf8)
        #expect(looRows == (try String(contentsOfFile: w.path("split/devices.csv"), encoding: .utf8)))
        // The prior matters here, so the equality above is not vacuous.
        #expect(looRows != (try String(contentsOfFile: w.path("none/devices.csv"), encoding: .utf8)))
        let manifest = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: URL(fileURLWithPath: w.path("loo/run.json"))))
        #expect(manifest.parameters.prior_pooled_devices == 3)
    }
}

