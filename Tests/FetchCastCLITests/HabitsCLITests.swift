import Foundation
import Testing

/// `habits generate` end to end: deterministic files that `evaluate` and `ingest` take.
struct HabitsCLITests {
    @Test func generatesTheSameFileForTheSameSeedAndEvaluateReplaysIt() throws {
        let w = try Workspace()
        let a = try w.run(["habits", "generate", "--seed", "1", "--out", "x.csv.gz"])
        #expect(a.status == 0, "\(a.err)")
        #expect(a.out.isEmpty)
        #expect(a.err.contains("launches for 6 devices over 42 days (seed 1)"), "\(a.err)")
        #expect(try w.run(["habits", "generate", "--seed", "1", "--out", "y.csv.gz"]).status == 0)
        let x = try Data(contentsOf: URL(fileURLWithPath: w.path("x.csv.gz")))
        #expect(x.prefix(2) == Data([0x1f, 0x8b]))
        #expect(x == (try Data(contentsOf: URL(fileURLWithPath: w.path("y.csv.gz")))))
        let e = try w.run(["evaluate", "x.csv.gz", "--out", "dir", "--policies", "hourly", "--budgets", "6"])
        #expect(e.status == 0, "\(e.err)")
        let summary = try String(contentsOfFile: w.path("dir/summary.csv"), encoding: .utf8)
        #expect(summary.split(separator: "\n").count == 2, "\(summary)")
        #expect(summary.contains("hourly"))
    }

    @Test func writesCSVToStdoutAndRefusesAnUnknownArchetype() throws {
        let w = try Workspace()
        let r = try w.run(["habits", "generate", "--archetypes", "daily-0800", "--days", "2"])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out == """
            time,device,app,event,result,bytes,duration_ms
            2024-03-04T08:00:00+01:00,daily-0800-1,news,launch,,,60000
            2024-03-04T12:30:00+01:00,daily-0800-1,chat,launch,,,60000
            2024-03-04T21:10:00+01:00,daily-0800-1,chat,launch,,,60000
            2024-03-05T08:00:00+01:00,daily-0800-1,news,launch,,,60000
            2024-03-05T12:30:00+01:00,daily-0800-1,chat,launch,,,60000
            2024-03-05T21:10:00+01:00,daily-0800-1,chat,launch,,,60000

            """)
        let bad = try w.run(["habits", "generate", "--archetypes", "commuter,dayly"])
        #expect(bad.status == 64)
        #expect(bad.err.contains("unknown archetype 'dayly' in --archetypes"), "\(bad.err)")
        #expect(bad.out.isEmpty)
        let start = try w.run(["habits", "generate", "--start", "2024-3-4"])
        #expect(start.status == 64)
        #expect(start.err.contains("--start '2024-3-4' is not a date"), "\(start.err)")
    }
}
