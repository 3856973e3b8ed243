import FetchCastCore
import Foundation
import FetchCastTrace
import Testing
import FetchCastTestSupport

/// Mutated and random inputs: the reader returns events or a ``TraceError`` naming a place in
/// the file — never a crash, never an error without a location for a row-level problem.
struct MalformedInputTests {
    static let validCSV = #"""
        time,device,app,event,result,bytes,duration_ms
        2013-11-09T23:36:45+01:00,20_M,com.android.mms,launch,,,11000
        2013-11-09T23:40:00.25Z,"20,M","news ""daily""",fetch,newData,18234,850
        1384040205,,com.bbc.news,publish,,,
        2013-11-10T00:00:00-05:30,20_M,com.android.mms,fetch,failed,,

        """#

    static let validJSON = #"""
        {"time":"2013-11-09T23:36:45+01:00","device":"20_M","app":"com.android.mms","event":"launch","duration_ms":11000}
        {"time":1384040205,"device":"","app":"n\u00e9ws","event":"publish","result":null}
        {"time":"2013-11-09T23:40:00Z","device":"a","app":"b","event":"fetch","result":"noData","bytes":12}

        """#

    /// Reads a whole file; returns the number of events or the error.
    func read(_ path: String) -> Result<Int, TraceError> {
        do {
            let reader = try TraceReader(path: path, symbols: SymbolTable())
            var batch: [EncodedEvent] = []
            while try reader.next(into: &batch, maxCount: 3) {}
            return .success(batch.count)
        } catch {
            return .failure(error)
        }
    }

    func mutate(_ bytes: [UInt8], using rng: inout SeededGenerator) -> [UInt8] {
        var b = bytes
        for _ in 0..<Int.random(in: 1...6, using: &rng) where !b.isEmpty {
            let i = Int.random(in: 0..<b.count, using: &rng)
            switch Int.random(in: 0..<5, using: &rng) {
            case 0: b[i] = UInt8.random(in: 0...255, using: &rng)
            case 1: b.remove(at: i)
            case 2: b.insert([0x22, 0x2C, 0x0A, 0x0D, 0x7B, 0x5C, 0xFF][Int.random(in: 0..<7, using: &rng)], at: i)
            case 3: b.removeSubrange(i..<min(b.count, i + Int.random(in: 1...20, using: &rng)))
            default: b = Array(b[0..<i])
            }
        }
        return b
    }

    @Test func theUnmutatedSourcesAreValid() throws {
        let dir = try TemporaryDirectory()
        #expect(try read(dir.write("v.csv", Self.validCSV)).get() == 4)
        #expect(try read(dir.write("v.jsonl", Self.validJSON)).get() == 3)
    }

    @Test(arguments: [false, true])
    func mutatedTracesNeverCrashAndErrorsNameAPlace(gzip: Bool) throws {
        let dir = try TemporaryDirectory()
        var rng = SeededGenerator(seed: gzip ? 7 : 3)
        var failures = 0
        for round in 0..<300 {
            let source = Array((round % 2 == 0 ? Self.validCSV : Self.validJSON).utf8)
            let bytes = mutate(source, using: &rng)
            let path: String
            if gzip {
                path = try dir.writeGzip("m\(round).gz", String(decoding: bytes, as: UTF8.self))
            } else {
                path = try dir.write("m\(round).csv", bytes: bytes)
            }
            if case .failure(let error) = read(path) {
                failures += 1
                #expect(error.description.hasPrefix(path), "\(error)")
                switch error.problem {
                case .empty, .cannotOpen, .truncatedGzip, .corruptGzip: break
                default: #expect(error.line > 0, "a row-level error names its line: \(error)")
                }
            }
        }
        #expect(failures > 0, "the mutations must exercise error paths")
    }

    /// An error names the file first and, for a row's problem, the line.
    func expectNamesItsPlace(_ error: TraceError, _ path: String) {
        #expect(error.file == path && error.description.hasPrefix(path), "\(error)")
        switch error.problem {
        case .empty, .cannotOpen, .truncatedGzip, .corruptGzip:
            #expect(error.line == 0, "a file-level error names no line: \(error)")
        default:
            #expect(error.line > 0 && error.column > 0, "a row-level error names its line and column: \(error)")
        }
    }

    @Test func randomBytesAreRefusedWithAnErrorNamingTheFile() throws {
        let dir = try TemporaryDirectory()
        var rng = SeededGenerator(seed: 11)
        for round in 0..<100 {
            let bytes = (0..<Int.random(in: 0...400, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let path = try dir.write("r\(round).bin", bytes: bytes)
            switch read(path) {
            case .success(let count):
                Issue.record("\(bytes.count) random bytes read as a trace of \(count) events: \(path)")
            case .failure(let error):
                expectNamesItsPlace(error, path)
            }
        }
    }

    @Test func aDamagedGzipIsRefusedUnlessOnlyItsHeaderMetadataChanged() throws {
        let dir = try TemporaryDirectory()
        var rng = SeededGenerator(seed: 11)
        // Continue the sequence the random-bytes rounds used before this test was split off.
        for _ in 0..<100 {
            for _ in 0..<Int.random(in: 0...400, using: &rng) { _ = UInt8.random(in: 0...255, using: &rng) }
        }
        let valid = try dir.writeGzip("v.gz", Self.validCSV)
        let gz = try Array(Data(contentsOf: URL(fileURLWithPath: valid)))
        var parsed = 0, refused = 0
        for round in 0..<100 {
            var b = gz
            let i = Int.random(in: 0..<b.count, using: &rng)
            b[i] ^= UInt8.random(in: 1...255, using: &rng)
            let truncated = round % 3 == 0
            if truncated { b = Array(b.prefix(Int.random(in: 0..<b.count, using: &rng))) }
            let path = try dir.write("g\(round).gz", bytes: b)
            switch read(path) {
            case .success(let count):
                // gzip's FLG text bit, MTIME, XFL and OS bytes (3–9) are not checked by the
                // CRC; every other change, and every cut, is.
                #expect(!truncated && (3...9).contains(i) && count == 4, "byte \(i) changed, \(truncated ? "cut" : "whole"): \(count) events")
                parsed += 1
            case .failure(let error):
                expectNamesItsPlace(error, path)
                refused += 1
            }
        }
        #expect(refused > 0, "\(parsed) of 100 damaged streams parsed")
    }
}
