import Foundation
import Testing
import FetchCastTrace
import FetchCastTestSupport

struct DecodedInputTests {
    static let text = header + """
        2013-11-09T22:36:45Z,d1,com.example.news,launch,,,
        2013-11-09T22:36:46Z,d1,com.example.news,fetch,newData,10,20
        2013-11-09T22:36:47Z,,com.example.news,publish,,,

        """

    @Test func detectsGzipByMagicBytesNotName() throws {
        let dir = try TemporaryDirectory()
        let gzipNamedCSV = try dir.write("trace.csv", bytes: try TemporaryDirectory.gzip(Array(Self.text.utf8)))
        let plainNamedGz = try dir.write("trace.csv.gz", Self.text)
        let compressed = try readTrace(gzipNamedCSV)
        let plain = try readTrace(plainNamedGz)
        #expect(compressed.isGzip)
        #expect(!plain.isGzip)
        #expect(compressed.events.count == 3)
        #expect(compressed.events == plain.events)
        #expect(compressed.lines == plain.lines)
    }

    @Test func hashesTheRawBytesNotTheDecodedText() throws {
        let dir = try TemporaryDirectory()
        let bytes = try TemporaryDirectory.gzip(Array(Self.text.utf8))
        let path = try dir.write("trace.gz", bytes: bytes)
        #expect(try readTrace(path).sha256 == SHA256.hex(of: bytes))
        #expect(try readTrace(try dir.write("plain.csv", Self.text)).sha256 == SHA256.hex(of: Array(Self.text.utf8)))
    }

    @Test func readsWhatGzipSinkWrites() throws {
        let dir = try TemporaryDirectory()
        let path = try dir.writeGzip("sink.csv.gz", Self.text)
        let trace = try readTrace(path)
        #expect(trace.isGzip)
        #expect(trace.events == (try readTrace(text: Self.text)).events)
    }

    @Test func readsConcatenatedMembersLikeZcat() throws {
        let dir = try TemporaryDirectory()
        let lines = Self.text.split(separator: "\n", omittingEmptySubsequences: false)
        let first = lines[0...2].joined(separator: "\n") + "\n"
        let second = lines[3...].joined(separator: "\n")
        let bytes = try TemporaryDirectory.gzip(Array(first.utf8)) + TemporaryDirectory.gzip(Array(second.utf8))
        let trace = try readTrace(try dir.write("members.gz", bytes: bytes))
        #expect(trace.events == (try readTrace(text: Self.text)).events)
        #expect(trace.lines == [2, 3, 4])
    }

    @Test func ignoresZeroPaddingAfterTheLastMember() throws {
        let dir = try TemporaryDirectory()
        let bytes = try TemporaryDirectory.gzip(Array(Self.text.utf8)) + [UInt8](repeating: 0, count: 512)
        #expect(try readTrace(try dir.write("padded.gz", bytes: bytes)).events.count == 3)
    }

    @Test(arguments: [1, 2, 10, 20])
    func reportsATruncatedGzip(droppedBytes: Int) throws {
        let dir = try TemporaryDirectory()
        let bytes = try TemporaryDirectory.gzip(Array(Self.text.utf8))
        let path = try dir.write("cut.gz", bytes: Array(bytes.dropLast(droppedBytes)))
        let error = traceError(path)
        #expect(error.map { caseName($0.problem) } == "truncatedGzip")
        #expect(error?.description.hasPrefix("\(path): the gzip stream ends early") == true, "\(String(describing: error))")
    }

    @Test func saysHowFarATruncatedGzipWasRead() throws {
        // 3,000 lines compress to a few kilobytes; cut the file at two thirds.
        var text = header
        for i in 0..<3_000 { text += "\(1_384_036_605 + i),dev-\(i % 7),com.app\(i % 5),launch,,,\(i)\n" }
        let dir = try TemporaryDirectory()
        let bytes = try TemporaryDirectory.gzip(Array(text.utf8))
        let kept = bytes.count * 2 / 3
        let path = try dir.write("cut.csv.gz", bytes: Array(bytes.prefix(kept)))
        let error = try #require(traceError(path))
        guard case .truncatedGzip(let compressed, let lines) = error.problem else {
            Issue.record("expected a truncated gzip, got \(error)")
            return
        }
        #expect(compressed == Int64(kept))
        // Every complete line decoded before the cut: at least one, fewer than all 3,001.
        let complete = try #require(lines)
        #expect(complete > 1 && complete < 3_001, "\(complete)")
        #expect(error.description == "\(path): the gzip stream ends early, after \(kept) compressed bytes (the last complete line is line \(complete)): the file is truncated (re-copy or re-compress it)")
    }

    @Test func saysWhenATruncatedGzipHeldNoCompleteLine() throws {
        let dir = try TemporaryDirectory()
        let path = try dir.write("header.gz", bytes: [0x1f, 0x8b, 0x08, 0x00, 0x00])
        let error = try #require(traceError(path))
        #expect(error.problem == .truncatedGzip(compressedBytes: 5, completeLines: 0))
        #expect(error.description.contains("after 5 compressed bytes (before the first complete line)"), "\(error)")
    }

    @Test func reportsAGzipCutInsideItsHeader() throws {
        let dir = try TemporaryDirectory()
        let path = try dir.write("header.gz", bytes: [0x1f, 0x8b, 0x08, 0x00, 0x00])
        #expect(traceError(path).map { caseName($0.problem) } == "truncatedGzip")
    }

    @Test func reportsCorruptCompressedData() throws {
        let dir = try TemporaryDirectory()
        var bytes = try TemporaryDirectory.gzip(Array(Self.text.utf8))
        // Byte 10 starts the deflate data (no file name with -n): make the block type invalid.
        bytes[10] = 0xFF
        let path = try dir.write("corrupt.gz", bytes: bytes)
        let error = traceError(path)
        #expect(error.map { caseName($0.problem) } == "corruptGzip")
        #expect(error?.description.hasPrefix("\(path): the gzip data is corrupt: ") == true, "\(String(describing: error))")
    }

    @Test func reportsABadChecksum() throws {
        let dir = try TemporaryDirectory()
        var bytes = try TemporaryDirectory.gzip(Array(Self.text.utf8))
        bytes[bytes.count - 8] ^= 0xFF  // CRC-32 in the trailer
        let error = traceError(try dir.write("crc.gz", bytes: bytes))
        #expect(error.map { caseName($0.problem) } == "corruptGzip")
        #expect(error?.description.contains("incorrect data check") == true, "\(String(describing: error))")
    }

    @Test func reportsGarbageAfterTheLastMember() throws {
        let dir = try TemporaryDirectory()
        let bytes = try TemporaryDirectory.gzip(Array(Self.text.utf8)) + Array("trailing text".utf8)
        let error = traceError(try dir.write("garbage.gz", bytes: bytes))
        #expect(error.map { caseName($0.problem) } == "corruptGzip")
    }

    @Test func reportsAnEmptyGzipAsAnEmptyFile() throws {
        let dir = try TemporaryDirectory()
        let path = try dir.write("empty.gz", bytes: try TemporaryDirectory.gzip([]))
        let error = traceError(path)
        #expect(error.map { caseName($0.problem) } == "empty")
        #expect(error?.line == 0)
    }

    @Test func readsAOneByteFile() throws {
        // Too short to hold the gzip magic: read as text (a header naming an unknown column).
        let error = try traceError(text: "x")
        #expect(error.map { caseName($0.problem) } == "unknownColumn")
    }

    @Test func streamsALargeGzipThroughSmallReads() throws {
        let dir = try TemporaryDirectory()
        var text = "time,device,app,event,bytes\n"
        for i in 0..<50_000 { text += "\(1_384_036_605 + i),dev-\(i % 50),com.app\(i % 7),launch,\(i)\n" }
        let path = try dir.writeGzip("big.csv.gz", text)
        let input = DecodedInput(try RawInput(path: path))
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1000, alignment: 1)
        defer { chunk.deallocate() }
        var decoded: [UInt8] = []
        while true {
            let n = try input.read(into: chunk)
            if n == 0 { break }
            decoded.append(contentsOf: chunk[0..<n])
        }
        #expect(input.isGzip)
        #expect(decoded == Array(text.utf8))
        #expect(input.raw.sha256 == (try RawInput.sha256(ofFile: path)))
        #expect(input.raw.sha256 == SHA256.hex(of: FileManager.default.contents(atPath: path) ?? Data()))
    }
}
