import FetchCastCore
import FetchCastTrace
import Foundation
import Testing
@testable import FetchCastReplay

struct TraceScanTests {
    private func write(_ text: String) throws -> String {
        let path = NSTemporaryDirectory() + "fetchcast-scan-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).csv"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func anEventOutOfOrderOnADeviceNamesItsFileAndLine() throws {
        let path = try write("""
            time,device,app,event
            2024-01-01T10:00:00Z,d1,x,launch
            2024-01-01T09:00:00Z,d2,x,launch
            2024-01-01T11:00:00Z,d1,x,launch
            2024-01-01T10:30:00Z,d1,x,launch

            """)
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            _ = try Evaluator.evaluate(.files([path]), options: EvaluationOptions(policies: ["none"]))
            Issue.record("expected an error")
        } catch {
            #expect(error.description.hasPrefix("\(path):5:"))
            #expect(error.description.contains("go back in time"))
            #expect(error.description.contains("'d1'"))
        }
    }

    @Test func badRowsFailAsIngestDoes() throws {
        let path = try write("time,device,app,event\n2024-01-01T10:00:00Z,d1,x,open\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: EvaluationError.self) {
            try Evaluator.evaluate(.files([path]), options: EvaluationOptions(policies: ["none"]))
        }
    }

    @Test func devicesAndTimeWindowSelectASubset() throws {
        var t = Trace()
        for s in [0.0, 4000, 8000, 12000] {
            t.launch("x", at: s)
            t.launch("x", at: s, device: "d2")
        }
        var options = EvaluationOptions(policies: ["none"], threads: 1)
        options.devices = ["d2"]
        options.from = t.at(4000)
        options.to = t.at(12000)  // exclusive
        let e = try Evaluator.evaluate(.events(t.events), options: options)
        #expect(e.devices.map(\.device) == ["d2"])
        #expect(e.row("none").launches == 2)
        #expect(e.row("none").deviceDays == 4000.0 / 86_400)
    }

    @Test func fetchEnabledAppsAreTheMostLaunched() throws {
        var t = Trace()
        for (i, app) in ["c", "b", "a", "d", "c", "b", "a", "c"].enumerated() { t.launch(app, at: Double(i) * 4000) }
        var scan = try TraceScan(options: EvaluationOptions(topApps: 2))
        try scan.read(.events(t.events), progress: nil)
        let result = scan.finish()
        #expect(result.devices[0].apps.map { result.appNames[Int($0)] } == ["c", "a"])
    }
}
