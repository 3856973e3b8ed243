import FetchCastTestSupport
import FetchCastTrace
import Foundation
import Testing
@testable import FetchCastReplay

struct DetailFilesTests {
    @Test func aScratchFileThatCannotBeReadFailsTheRunNamingIt() throws {
        let dir = try TemporaryDirectory()
        // A directory opens for reading, but every read of it fails (EISDIR): not an end of file.
        let part = dir.path + "/l-0-0.csv"
        try FileManager.default.createDirectory(atPath: part, withIntermediateDirectories: false)
        let gz = try GzipSink(path: dir.path + "/launches.csv.gz")
        let error = #expect(throws: EvaluationError.self) { try DetailFiles.copy(part, into: gz) }
        #expect(error?.description.hasPrefix("\(part): cannot read a --detail scratch file (Is a directory)") == true, "\(String(describing: error))")
    }

    @Test func copiesAScratchFileWhole() throws {
        let dir = try TemporaryDirectory()
        let part = try dir.write("l-0-0.csv", "a,1\nb,2\nc,3")
        let target = dir.path + "/launches.csv.gz"
        let gz = try GzipSink(path: target)
        try DetailFiles.copy(part, into: gz)
        #expect(gz.finish())
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-dc", target]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(String(decoding: data, as: UTF8.self) == "a,1\nb,2\nc,3")
    }
}
