import FetchCastCore
import Testing
import FetchCastTrace
import FetchCastTestSupport

/// 2013-11-09T22:36:45Z in microseconds.
let t0: Int64 = 1_384_036_605_000_000
/// The canonical header line.
let header = "time,device,app,event,result,bytes,duration_ms\n"

struct TraceReaderCSVTests {
    @Test func readsEveryKindOfEvent() throws {
        let trace = try readTrace(text: header + """
            2013-11-09T23:36:45+01:00,dev-1,com.example.news,launch,,,1500
            2013-11-09T22:36:46Z,dev-1,com.example.news,fetch,newData,2048,310
            2013-11-09T22:36:47Z,dev-2,com.example.news,fetch,noData,,
            2013-11-09T22:36:48Z,dev-2,com.example.mail,fetch,failed,0,0
            2013-11-09T22:36:49Z,,com.example.news,publish,,,

            """)
        #expect(trace.format == .csv)
        #expect(!trace.isGzip)
        #expect(trace.events == [
            TraceEvent(timeMicros: t0, utcOffsetSeconds: 3600, device: "dev-1", app: "com.example.news", kind: .launch, durationMs: 1500),
            TraceEvent(timeMicros: t0 + 1_000_000, device: "dev-1", app: "com.example.news", kind: .fetch, result: .newData, bytes: 2048, durationMs: 310),
            TraceEvent(timeMicros: t0 + 2_000_000, device: "dev-2", app: "com.example.news", kind: .fetch, result: .noData),
            TraceEvent(timeMicros: t0 + 3_000_000, device: "dev-2", app: "com.example.mail", kind: .fetch, result: .failed, bytes: 0, durationMs: 0),
            TraceEvent(timeMicros: t0 + 4_000_000, device: "", app: "com.example.news", kind: .publish),
        ])
        #expect(trace.lines == [2, 3, 4, 5, 6])
    }

    @Test func keepsIdenticalRows() throws {
        let row = "2013-11-09T22:36:45Z,,com.example.news,publish,,,\n"
        let trace = try readTrace(text: header + row + row + row)
        #expect(trace.events.count == 3)
        #expect(Set(trace.events).count == 1)
    }

    @Test func readsUnixSecondsInTheDefaultOffset() throws {
        let trace = try readTrace(
            text: "time,device,app,event\n1384036605,d,a,launch\n2013-11-09T22:36:45Z,d,a,launch\n",
            options: TraceOptions(defaultUTCOffsetSeconds: -19_800))
        #expect(trace.events.map(\.timeMicros) == [t0, t0])
        #expect(trace.events.map(\.utcOffsetSeconds) == [-19_800, 0])
    }

    @Test func unquotesRFC4180Fields() throws {
        let trace = try readTrace(text: header + """
            "2013-11-09T22:36:45Z","dev,1","com.""quoted"" app",launch,"",,"7"
            2013-11-09T22:36:45Z,"",com.example.news,publish,,,

            """)
        #expect(trace.events == [
            TraceEvent(timeMicros: t0, device: "dev,1", app: #"com."quoted" app"#, kind: .launch, durationMs: 7),
            TraceEvent(timeMicros: t0, device: "", app: "com.example.news", kind: .publish),
        ])
    }

    /// Line breaks inside quotes are data, but no column may hold one (ids refuse control
    /// characters), so a multi-line record is always rejected; the lines after it still count.
    @Test func countsLinesInsideMultiLineRecords() throws {
        let (trace, skipped) = try readTraceSkipping(text: header + """
            2013-11-09T22:36:45Z,dev-1,"two
            lines",launch,,,
            2013-11-09T22:36:46Z,dev-1,"three
            ""quoted""
            lines",launch,,,
            2013-11-09T22:36:47Z,dev-2,plain,launch,,,

            """)
        #expect(trace.events.map(\.app) == ["plain"])
        #expect(trace.lines == [7])
        #expect(skipped.map(\.line) == [2, 4])
        #expect(skipped.map(\.problem) == [
            .controlCharacter(column: "app", value: "two\\u{A}lines", scalar: 0x0A),
            .controlCharacter(column: "app", value: "three\\u{A}\"quoted\"\\u{A}lines", scalar: 0x0A),
        ])
    }

    @Test func reportsTheRightLineAfterAMultiLineRecord() throws {
        let dir = try TemporaryDirectory()
        let path = try dir.write("multi.csv", header + """
            2013-11-09T22:36:45Z,dev-1,"two
            lines",launch,,,
            2013-11-09T22:36:46Z,,com.example.news,launch,,,

            """)
        let first = traceError(path)
        #expect(first?.description.hasPrefix("\(path):2:29: the app id 'two\\u{A}lines' holds the control character U+000A") == true, "\(String(describing: first))")
        let (_, skipped) = try readTraceSkipping(text: try String(contentsOfFile: path, encoding: .utf8))
        #expect(skipped.map(\.line) == [2, 4])
        #expect(skipped.last?.column == 22)
        #expect(skipped.last.map { caseName($0.problem) } == "emptyValue")
    }

    @Test func readsAMultiLineRecordAtTheEndWithoutALineBreak() throws {
        // Read whole (its quote closes on the last line), then refused for the line break in the id.
        let error = try traceError(text: header + "2013-11-09T22:36:45Z,dev-1,\"two\nlines\",launch,,,")
        #expect(error?.line == 2)
        #expect(error?.column == 29)
        #expect(error?.problem == .controlCharacter(column: "app", value: "two\\u{A}lines", scalar: 0x0A))
    }

    @Test func readsAQuoteInsideAnUnquotedFieldLiterally() throws {
        // Not RFC 4180, but common: the quote must not open a field that swallows later lines.
        let trace = try readTrace(text: header + #"""
            2013-11-09T22:36:45Z,dev"1,com.a,launch,,,
            2013-11-09T22:36:46Z,dev-2,"say ""hi""",launch,,,
            2013-11-09T22:36:47Z,dev-3,com.a,launch,,,

            """#)
        #expect(trace.events.map(\.device) == ["dev\"1", "dev-2", "dev-3"])
        #expect(trace.events.map(\.app) == ["com.a", "say \"hi\"", "com.a"])
        #expect(trace.lines == [2, 3, 4])
    }

    @Test func readsColumnsInAnyOrder() throws {
        let trace = try readTrace(text: """
            duration_ms,event,app,bytes,device,result,time
            5,fetch,com.a,10,dev-1,noData,2013-11-09T22:36:45Z

            """)
        #expect(trace.events == [
            TraceEvent(timeMicros: t0, device: "dev-1", app: "com.a", kind: .fetch, result: .noData, bytes: 10, durationMs: 5),
        ])
    }

    @Test(arguments: ["time,device,app,event", "event,time,app,device", "time,device,app,event,bytes", "app,event,device,time,duration_ms"])
    func readsWithoutTheOptionalColumns(columns: String) throws {
        let names = columns.split(separator: ",").map(String.init)
        let values: [String: String] = [
            "time": "2013-11-09T22:36:45Z", "device": "d", "app": "a", "event": "launch", "bytes": "", "duration_ms": "",
        ]
        let row = names.map { values[$0]! }.joined(separator: ",")
        let trace = try readTrace(text: columns + "\n" + row + "\n")
        #expect(trace.events == [TraceEvent(timeMicros: t0, device: "d", app: "a", kind: .launch)])
    }

    @Test func readsHeaderNamesWithSpacesAndQuotes() throws {
        let trace = try readTrace(text: " time ,\"device\",app,event\n2013-11-09T22:36:45Z,d,a,launch\n")
        #expect(trace.events.count == 1)
    }

    static let plain = header + "2013-11-09T22:36:45Z,d,a,launch,,,\n2013-11-09T22:36:46Z,d,\"x\ny\",launch,,,\n2013-11-09T22:36:47Z,,a,publish,,,\n"

    @Test(arguments: [
        ("LF", plain),
        ("CRLF", plain.replacingOccurrences(of: "\n", with: "\r\n")),
        ("no final line break", String(plain.dropLast())),
        // "\r\n" is one Character: drop it whole.
        ("CRLF, no final line break", String(plain.replacingOccurrences(of: "\n", with: "\r\n").dropLast())),
        ("byte order mark", "\u{FEFF}" + plain),
    ])
    func readsLineEndingVariantsAlike(variant: String, text: String) throws {
        let (trace, skipped) = try readTraceSkipping(text: text)
        let (expected, _) = try readTraceSkipping(text: Self.plain)
        #expect(expected.events.count == 2)
        #expect(trace.events.map(\.device) == ["d", ""])
        #expect(trace.events.map(\.kind) == expected.events.map(\.kind))
        // A CR outside quotes is part of the line break; inside a quoted multi-line field it is
        // data (here refused: an id may not hold it).
        #expect(trace.events.map(\.app) == ["a", "a"])
        #expect(trace.lines == [2, 5])
        #expect(skipped.map(\.line) == [3])
        let crlf = variant.hasPrefix("CRLF")
        #expect(skipped.first?.problem == .controlCharacter(
            column: "app", value: crlf ? "x\\u{D}\\u{A}y" : "x\\u{A}y", scalar: crlf ? 0x0D : 0x0A))
    }

    @Test func skipsBlankLinesAndCountsThem() throws {
        let trace = try readTrace(text: "\n\r\n" + header + "\n2013-11-09T22:36:45Z,d,a,launch,,,\n\r\n\n2013-11-09T22:36:46Z,d,a,launch,,,\n\n")
        #expect(trace.events.count == 2)
        #expect(trace.lines == [5, 8])
    }

    @Test func readsAHeaderWithoutRowsAsNoEvents() throws {
        let trace = try readTrace(text: header)
        #expect(trace.events.isEmpty)
        #expect(trace.format == .csv)
    }

    @Test func readsNonASCIINames() throws {
        let trace = try readTrace(text: "time,device,app,event\n2013-11-09T22:36:45Z,téléphone,应用,launch\n")
        #expect(trace.events.map(\.device) == ["téléphone"])
        #expect(trace.events.map(\.app) == ["应用"])
    }

    @Test func readsInBatchesOfTheRequestedSize() throws {
        let dir = try TemporaryDirectory()
        var text = header
        for i in 0..<25 { text += "\(1_384_036_605 + i),d\(i % 3),a,launch,,,\n" }
        let path = try dir.write("batches.csv", text)
        let reader = try TraceReader(path: path, symbols: SymbolTable())
        var batch: [EncodedEvent] = []
        var sizes: [Int] = []
        while try reader.next(into: &batch, maxCount: 10) {
            sizes.append(batch.count)
            batch.removeAll()
        }
        #expect(sizes == [10, 10, 5])
        #expect(reader.linesRead == 26)
    }

    @Test func readsLinesAcrossBufferRefills() throws {
        // 60k rows (~2.4 MB) are more than the reader's buffer holds at once.
        let dir = try TemporaryDirectory()
        var text = "time,device,app,event,bytes\n"
        for i in 0..<60_000 { text += "\(1_384_036_605 + i),dev-\(i % 97),\"app,\(i % 13)\",launch,\(i)\n" }
        let path = try dir.write("large.csv", text)
        let trace = try readTrace(path)
        #expect(trace.events.count == 60_000)
        #expect(trace.events.enumerated().allSatisfy { $0.element.bytes == Int64($0.offset) })
        #expect(trace.lines.last == 60_001)
        #expect(trace.events[59_999].app == "app,\(59_999 % 13)")
    }
}
