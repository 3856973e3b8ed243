import Foundation
import Testing

/// An output interrupted by SIGINT or SIGTERM leaves no hidden temporary file beside its target.
struct InterruptedOutputCLITests {
    /// The hidden temporary files beside `target`.
    private func temporaries(of target: String, in ws: Workspace) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: ws.directory).filter { $0.hasPrefix(".\(target).fetchcast-") }
    }

    /// Starts `arguments`, sends `signal` once the command has written into the temporary file
    /// of `target`, and checks that it ended by that signal, left no temporary file and kept the
    /// old `target` ("the old output").
    private func interruptMidWrite(_ arguments: [String], of target: String, with signal: Int32, in ws: Workspace) throws {
        try ws.write(target, "the old output\n")
        let command = try ws.start(arguments)
        var seen = false
        let deadline = Date().addingTimeInterval(300)
        while command.isRunning && Date() < deadline {
            if let name = try temporaries(of: target, in: ws).first,
                let size = try FileManager.default.attributesOfItem(atPath: ws.path(name))[.size] as? Int, size > 0
            {
                seen = true
                command.send(signal)
                break
            }
            usleep(1_000)
        }
        let result = try command.wait()
        try #require(seen, "\(arguments[0]) ended before it could be interrupted (status \(result.status)); give it more to write")
        #expect(result.signalled && result.status == signal, "status \(result.status), signalled \(result.signalled): \(result.err)")
        #expect(try temporaries(of: target, in: ws) == [])
        #expect(try String(contentsOfFile: ws.path(target), encoding: .utf8) == "the old output\n")
    }

    @Test(arguments: [SIGINT, SIGTERM])
    func aSignalMidWriteRemovesTheTemporaryFileAndKeepsTheOldOutput(signal: Int32) throws {
        let ws = try Workspace()
        try ws.generateTrace("big.csv.gz", rows: 400_000)
        let ingest = try ws.run(["ingest", "big.csv.gz"])
        try #require(ingest.status == 0, "\(ingest.err)")
        try interruptMidWrite(["export", "events", "-o", "out.csv"], of: "out.csv", with: signal, in: ws)
    }

    /// `habits generate` killed mid-write (it once left an empty file in place of the old one).
    /// Compressed, the write takes seconds: long enough to be interrupted in the middle.
    @Test func aSignalMidGenerateKeepsTheOldOutput() throws {
        let ws = try Workspace()
        try interruptMidWrite(
            ["habits", "generate", "--archetypes", "heavy", "--devices-per-archetype", "60", "--days", "300", "-o", "out.csv.gz"],
            of: "out.csv.gz", with: SIGTERM, in: ws)
    }
}
