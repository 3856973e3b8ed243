import Foundation
import Testing

/// `evaluate FILE` wants each device's rows in time order; an unsorted trace is ingested and
/// evaluated from the store instead, as the error says.
struct EvaluateOrderCLITests {
    static let unsorted = "time,device,app,event\n2024-01-01T10:00:00Z,d1,x,launch\n2024-01-01T09:00:00Z,d1,x,launch\n2024-01-01T11:00:00Z,d1,x,launch\n"

    @Test func anUnsortedTraceIsRefusedWithTheWayAround() throws {
        let ws = try Workspace()
        try ws.write("t.csv", Self.unsorted)
        let refused = try ws.run(["evaluate", "t.csv", "--out", "out", "--policies", "interval", "--budgets", "12"])
        #expect(refused.status == 1)
        #expect(refused.err.contains("t.csv:3:"), "\(refused.err)")
        #expect(refused.err.contains("`fetchcast ingest` it, which takes any order, and run `fetchcast evaluate --db`"), "\(refused.err)")
        // The way around works.
        try #require(try ws.run(["ingest", "t.csv"]).status == 0)
        let evaluated = try ws.run(["evaluate", "--db", "fetchcast.sqlite", "--out", "out", "--policies", "interval", "--budgets", "12", "--quiet"])
        #expect(evaluated.status == 0, "\(evaluated.err)")
        let summary = String(decoding: try Data(contentsOf: URL(fileURLWithPath: ws.path("out/summary.csv"))), as: UTF8.self)
        #expect(summary.split(separator: "\n").count == 2)
    }

    @Test func theReadmeSaysEvaluateWantsTimeOrder() throws {
        // Tests/FetchCastCLITests/<this file> → the package root.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        // The rule lives in docs/trace.md, which the README's trace format section points to.
        let trace = try String(contentsOf: root.appendingPathComponent("docs/trace.md"), encoding: .utf8)
        #expect(trace.contains("wants each device's rows in time order"))
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains("row order") && readme.contains("[docs/trace.md](docs/trace.md)"))
    }
}
