import FetchCastTestSupport
import Foundation
import Testing

/// `fetchcast evaluate` end to end: the built binary, stdout, stderr and exit status apart.
struct EvaluateCLITests {
    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    struct Manifest: Decodable {
        struct Parameters: Decodable {
            var policies: [String]
            var budgets: [Double]
            var tau_s: Double
        }
        struct Input: Decodable { var path: String; var sha256: String; var events: Int }
        var semantics: String
        var parameters: Parameters
        var inputs: [Input]
    }

    static var binary: URL { BuiltExecutable.url(named: "fetchcast") ?? URL(fileURLWithPath: ".build/debug/fetchcast") }

    static func run(_ arguments: [String]) throws -> Run {
        let p = Process()
        p.executableURL = binary
        p.arguments = arguments
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return Run(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
    }

    static func scratch() throws -> URL {
        let u = FileManager.default.temporaryDirectory.appendingPathComponent("fetchcast-evaluate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: u, withIntermediateDirectories: true)
        return u
    }

    static let trace = """
        time,device,app,event,result,bytes,duration_ms
        2024-01-01T08:00:00+01:00,d1,com.news,launch,,,
        2024-01-01T08:05:00+01:00,d1,com.mail,launch,,,
        2024-01-01T10:00:00+01:00,d1,com.news,launch,,,
        2024-01-01T10:30:00+01:00,,com.news,publish,,,
        2024-01-01T12:00:00+01:00,d1,com.news,launch,,,
        2024-01-01T12:10:00+01:00,d2,com.mail,launch,,,
        2024-01-02T08:00:00+01:00,d1,com.mail,launch,,,
        2024-01-02T09:00:00+01:00,d2,com.mail,launch,,,

        """

    @Test func writesTheOutputsAndASummaryOnStderrOnly() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let trace = dir.appendingPathComponent("t.csv")
        try Data(Self.trace.utf8).write(to: trace)
        let out = dir.appendingPathComponent("out").path
        let r = try Self.run(["evaluate", trace.path, "--policies", "none,interval,oracle,hourly", "--budgets", "4,24", "--detail", "--out", out])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.isEmpty)
        // The printed table names its columns as summary.csv does (one vocabulary), and every
        // one of them is a column of summary.csv.
        let csvColumns = Set(try String(contentsOfFile: "\(out)/summary.csv", encoding: .utf8).prefix { $0 != "\n" }.split(separator: ",").map(String.init))
        let printed = r.stderr.split(separator: "\n").first { $0.hasPrefix("policy ") }.map { $0.split(separator: " ").map(String.init) } ?? []
        #expect(printed.count == 11 && printed.allSatisfy(csvColumns.contains), "\(printed)")
        // ... then the slices' hit rates, each slice's needy launches (as in slices.csv) in its header.
        let slicesHeader = r.stderr.split(separator: "\n").first { $0.hasPrefix("policy ") && $0.contains("first_pickup") }
        let csvSlices = try String(contentsOfFile: "\(out)/slices.csv", encoding: .utf8).split(separator: "\n")
        let needy = csvSlices.filter { $0.hasPrefix("none,0,") }.map { $0.split(separator: ",", omittingEmptySubsequences: false)[5] }
        #expect(slicesHeader.map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
                == ["policy", "budget", "warm", "(\(needy[0]))", "30min-2h", "(\(needy[1]))", "first_pickup", "(\(needy[2]))"],
                "\(r.stderr)")
        for name in ["summary.csv", "devices.csv", "run.json", "launches.csv.gz", "fetches.csv.gz", "decisions.csv.gz", "plans.csv.gz"] {
            #expect(FileManager.default.fileExists(atPath: "\(out)/\(name)"), "\(name)")
        }
        let summary = try String(contentsOfFile: "\(out)/summary.csv", encoding: .utf8).split(separator: "\n")
        #expect(summary.count == 1 + 1 + 3 * 2)
        #expect(summary[1].hasPrefix("none,0,2,"))
        let m = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: URL(fileURLWithPath: "\(out)/run.json")))
        #expect(m.semantics == "v1")
        #expect(m.parameters.policies == ["none", "interval", "oracle", "hourly"])
        #expect(m.parameters.budgets == [4, 24] && m.parameters.tau_s == 1800)
        #expect(m.inputs.count == 1 && m.inputs[0].events == 8 && m.inputs[0].sha256.count == 64)

        // Same input, other thread count: byte-identical outputs.
        let again = dir.appendingPathComponent("again").path
        let r2 = try Self.run(["evaluate", trace.path, "--policies", "none,interval,oracle,hourly", "--budgets", "4,24", "--detail", "--threads", "1", "--quiet", "--out", again])
        #expect(r2.status == 0 && r2.stderr.isEmpty)
        for name in ["summary.csv", "devices.csv", "run.json", "launches.csv.gz", "fetches.csv.gz", "decisions.csv.gz", "plans.csv.gz"] {
            #expect(FileManager.default.contents(atPath: "\(out)/\(name)") == FileManager.default.contents(atPath: "\(again)/\(name)"), "\(name)")
        }
    }

    @Test func anOutOfOrderEventExitsOneNamingFileAndLine() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let trace = dir.appendingPathComponent("t.csv")
        try Data("time,device,app,event\n2024-01-01T10:00:00Z,d1,x,launch\n2024-01-01T09:00:00Z,d1,x,launch\n".utf8).write(to: trace)
        let r = try Self.run(["evaluate", trace.path, "--out", dir.appendingPathComponent("out").path])
        #expect(r.status == 1)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("\(trace.path):3:"))
        #expect(r.stderr.contains("go back in time"))
    }

    @Test(arguments: [
        ["--policies", "magic"], ["--budgets", "0"], ["--budgets", "x"], ["--tau", "soon"], ["--top-apps", "0"],
        ["--from", "2024-02-01", "--to", "2024-01-01"],
    ])
    func badFlagsAreUsageErrors(flags: [String]) throws {
        let r = try Self.run(["evaluate", "t.csv", "--out", "/tmp/never-written"] + flags)
        #expect(r.status == 64)
        #expect(r.stdout.isEmpty)
        #expect(!r.stderr.isEmpty)
    }

    @Test func aMissingEnergyFileIsARuntimeError() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let trace = dir.appendingPathComponent("t.csv")
        try Data(Self.trace.utf8).write(to: trace)
        let r = try Self.run(["evaluate", trace.path, "--energy", "/nonexistent.json", "--out", dir.appendingPathComponent("o").path])
        #expect(r.status == 1)
        #expect(r.stderr.contains("/nonexistent.json"))
    }
}
