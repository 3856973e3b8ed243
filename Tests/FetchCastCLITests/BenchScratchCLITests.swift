import Foundation
import Testing

/// `bench` outside a clone, and the scratch folder it makes.
struct BenchScratchCLITests {
    private func scratch(_ ws: Workspace) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: ws.path("tmp"))
    }

    @Test func predictOutsideACloneNamesTheTraceAndLeavesNoScratchFolder() throws {
        let ws = try Workspace()
        try FileManager.default.createDirectory(atPath: ws.path("tmp"), withIntermediateDirectories: true)
        let result = try ws.run(["bench", "predict"], environment: ["TMPDIR": ws.path("tmp")])
        #expect(result.status == 1)
        #expect(result.err.contains("Data/ubiqlog-sample.csv.gz: cannot read the trace for `bench predict` (the default, relative to a FetchCast clone); pass --trace FILE"), "\(result.err)")
        #expect(try scratch(ws) == [])
    }

    @Test func removesItsScratchFolderUnlessKept() throws {
        let ws = try Workspace()
        try FileManager.default.createDirectory(atPath: ws.path("tmp"), withIntermediateDirectories: true)
        try ws.copyFixture("good.csv")
        let arguments = ["bench", "predict", "--trace", ws.path("good.csv"), "--calls", "2"]
        let run = try ws.run(arguments, environment: ["TMPDIR": ws.path("tmp")])
        #expect(run.status == 0, "\(run.err)")
        #expect(try scratch(ws) == [])
        let kept = try ws.run(arguments + ["--keep"], environment: ["TMPDIR": ws.path("tmp")])
        #expect(kept.status == 0, "\(kept.err)")
        let left = try scratch(ws)
        #expect(left.count == 1 && left.first?.hasPrefix("fetchcast-bench-") == true, "\(left)")
    }
}
