import FetchCastTrace
import Foundation
import Testing
@testable import FetchCastReplay

struct OutputFilesTests {
    private func directory() -> String {
        NSTemporaryDirectory() + "fetchcast-out-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    }

    private func contents(_ dir: String) throws -> [String: Data] {
        var out: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: dir) {
            out[name] = try Data(contentsOf: URL(fileURLWithPath: "\(dir)/\(name)"))
        }
        return out
    }

    @Test func outputsAreByteIdenticalWhateverTheThreadCount() throws {
        let t = randomTrace(seed: 11, devices: 6)
        var files: [[String: Data]] = []
        for threads in [1, 3] {
            let dir = directory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let options = EvaluationOptions(
                policies: ["none", "interval", "oracle", "hourly", "learned"], budgets: [4, 24], detail: true, threads: threads)
            _ = try Evaluator.run(.events(t.events), options: options, outputDirectory: dir, toolVersion: "test")
            files.append(try contents(dir))
        }
        #expect(Set(files[0].keys) == ["summary.csv", "devices.csv", "slices.csv", "run.json", "launches.csv.gz", "fetches.csv.gz", "decisions.csv.gz", "plans.csv.gz"])
        #expect(files[0] == files[1])
    }

    @Test func summaryColumnsComeInTheV1Order() throws {
        let dir = directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var t = Trace()
        t.launch("x", at: 0)
        t.launch("x", at: 7200)
        _ = try Evaluator.run(.events(t.events), options: EvaluationOptions(policies: ["none", "interval"], budgets: [24]), outputDirectory: dir)
        let summary = String(decoding: try Data(contentsOf: URL(fileURLWithPath: "\(dir)/summary.csv")), as: UTF8.self)
        let lines = summary.split(separator: "\n").map(String.init)
        #expect(lines[0].hasPrefix("policy,budget,devices,device_days,launches,scored_launches,needy_launches,fresh_launches,fresh_ratio,hit_rate,fetches,fetches_per_device_day,wakeups_per_device_day,joules_per_device_day,mean_staleness_min,new_data_fetches,no_data_fetches,content_fresh_ratio"))
        #expect(lines[1] == "none,0,1,0.083,2,1,1,0,0.000000,0.000000,0,0.000,0.000,0.000,120.000,0,0,1.000000,0,0,0.000,0")
        #expect(lines.count == 3)
        let devices = String(decoding: try Data(contentsOf: URL(fileURLWithPath: "\(dir)/devices.csv")), as: UTF8.self)
        #expect(devices.hasPrefix("policy,budget,device,devices,device_days"))
    }

    @Test func runJSONRecordsParametersEnergyAndInputs() throws {
        struct Manifest: Decodable {
            struct Parameters: Decodable { var policies: [String]; var budgets: [Double]; var tau_s: Double; var top_apps: Int }
            var semantics: String
            var version: String
            var parameters: Parameters
            var energy: EnergyProfile
            var inputs: [InputDigest]
        }
        let dir = directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let trace = dir + ".csv"
        try Data("time,device,app,event\n2024-01-01T10:00:00Z,d1,x,launch\n2024-01-01T12:00:00Z,d1,x,launch\n".utf8)
            .write(to: URL(fileURLWithPath: trace))
        defer { try? FileManager.default.removeItem(atPath: trace) }
        _ = try Evaluator.run(
            .files([trace]), options: EvaluationOptions(policies: ["oracle"], budgets: [3], tau: 600, energy: .wifi),
            outputDirectory: dir, toolVersion: "9.9")
        let m = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: URL(fileURLWithPath: "\(dir)/run.json")))
        #expect(m.semantics == "v1" && m.version == "9.9")
        #expect(m.parameters.policies == ["oracle"] && m.parameters.budgets == [3] && m.parameters.tau_s == 600)
        #expect(m.energy == .wifi)
        #expect(m.inputs.map(\.sha256) == [try RawInput.sha256(ofFile: trace)])
    }
}
