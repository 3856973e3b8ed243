import Foundation
import Testing

/// An output interrupted by SIGINT or SIGTERM leaves no hidden temporary file beside its target.
struct InterruptedOutputCLITests {
    /// The hidden temporary files beside `out.csv`.
    private func temporaries(_ ws: Workspace) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: ws.directory).filter { $0.hasPrefix(".out.csv.fetchcast-") }
    }

    @Test(arguments: [SIGINT, SIGTERM])
    func aSignalMidWriteRemovesTheTemporaryFileAndKeepsTheOldOutput(signal: Int32) throws {
        let ws = try Workspace()
        try ws.generateTrace("big.csv.gz", rows: 400_000)
        let ingest = try ws.run(["ingest", "big.csv.gz"])
        try #require(ingest.status == 0, "\(ingest.err)")
        try ws.write("out.csv", "the old output\n")

        let export = try ws.start(["export", "events", "-o", "out.csv"])
        // Wait until the export has written into its temporary file, then interrupt it.
        var seen = false
        let deadline = Date().addingTimeInterval(60)
        while export.isRunning && Date() < deadline {
            if let name = try temporaries(ws).first,
                let size = try FileManager.default.attributesOfItem(atPath: ws.path(name))[.size] as? Int, size > 0
            {
                seen = true
                export.send(signal)
                break
            }
            usleep(2_000)
        }
        let result = try export.wait()
        try #require(seen, "the export ended before it could be interrupted (status \(result.status)); make the store larger")
        #expect(result.signalled && result.status == signal, "status \(result.status), signalled \(result.signalled): \(result.err)")
        #expect(try temporaries(ws) == [])
        #expect(try String(contentsOfFile: ws.path("out.csv"), encoding: .utf8) == "the old output\n")
    }

    /// `habits generate` killed mid-write (it once left an empty file in place of the old one).
    @Test func aSignalMidGenerateKeepsTheOldOutput() throws {
        let ws = try Workspace()
        try ws.write("out.csv.gz", "the old output\n")
        // Compressed: the write takes seconds, long enough to be interrupted in the middle.
        let generate = try ws.start(["habits", "generate", "--archetypes", "heavy", "--devices-per-archetype", "60", "--days", "300", "-o", "out.csv.gz"])
        func temporaries() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: ws.directory).filter { $0.hasPrefix(".out.csv.gz.fetchcast-") }
        }
        var seen = false
        let deadline = Date().addingTimeInterval(300)
        while generate.isRunning && Date() < deadline {
            if let name = try temporaries().first,
                let size = try FileManager.default.attributesOfItem(atPath: ws.path(name))[.size] as? Int, size > 0
            {
                seen = true
                generate.send(SIGTERM)
                break
            }
            usleep(1_000)
        }
        let result = try generate.wait()
        try #require(seen, "the generator ended before it could be interrupted (status \(result.status)); generate more")
        #expect(result.signalled && result.status == SIGTERM, "status \(result.status): \(result.err)")
        #expect(try temporaries() == [])
        #expect(try String(contentsOfFile: ws.path("out.csv.gz"), encoding: .utf8) == "the old output\n")
    }
}
