import FetchCastCore
import Testing
import FetchCastTrace
import FetchCastTestSupport

/// One invalid input, where the error must point, and what it must say.
struct BadInput: Sendable {
    var name: String
    var bytes: [UInt8]
    var line: Int
    var column: Int
    /// The `TraceError.Problem` case expected.
    var problem: String
    /// Text the message must contain.
    var mentions: String
    var options = TraceOptions()

    init(_ name: String, _ text: String, line: Int, column: Int, _ problem: String, mentions: String, options: TraceOptions = TraceOptions()) {
        self.init(name, bytes: Array(text.utf8), line: line, column: column, problem, mentions: mentions, options: options)
    }

    init(_ name: String, bytes: [UInt8], line: Int, column: Int, _ problem: String, mentions: String, options: TraceOptions = TraceOptions()) {
        self.name = name
        self.bytes = bytes
        self.line = line
        self.column = column
        self.problem = problem
        self.mentions = mentions
        self.options = options
    }
}

extension BadInput: CustomTestStringConvertible {
    var testDescription: String { name }
}

/// The case name of a problem, e.g. `emptyValue`.
func caseName(_ problem: TraceError.Problem) -> String {
    String(String(describing: problem).prefix { $0 != "(" })
}

/// 20 bytes: the time most rows use.
private let t = "2013-11-09T22:36:45Z"

struct TraceErrorTests {
    static let csvCases: [BadInput] = [
        // Rows (line 2). Columns are 1-based bytes: "T,d1,com.a," is 31 bytes.
        BadInput("bad event", header + "\(t),d1,com.a,open,,,\n", line: 2, column: 31, "badValue", mentions: "invalid event 'open' (expected launch, fetch, publish or state)"),
        BadInput("fetch without result", header + "\(t),d1,com.a,fetch,,,\n", line: 2, column: 37, "emptyValue", mentions: "the result is empty"),
        BadInput("fetch without a result column", "time,device,app,event\n\(t),d1,com.a,fetch\n", line: 2, column: 1, "emptyValue", mentions: "the result is empty"),
        BadInput("unknown result", header + "\(t),d1,com.a,fetch,maybe,,\n", line: 2, column: 37, "badValue", mentions: "invalid result 'maybe'"),
        BadInput("result on a launch", header + "\(t),d1,com.a,launch,newData,,\n", line: 2, column: 38, "badValue", mentions: "invalid result 'newData' (expected no result on a launch event"),
        BadInput("result on a publish", header + "\(t),,com.a,publish,noData,,\n", line: 2, column: 37, "badValue", mentions: "no result on a publish event"),
        BadInput("empty device on a launch", header + "\(t),,com.a,launch,,,\n", line: 2, column: 22, "emptyValue", mentions: "the device is empty"),
        BadInput("empty device on a fetch", header + "\(t),,com.a,fetch,failed,,\n", line: 2, column: 22, "emptyValue", mentions: "the device is empty"),
        BadInput("empty app", header + "\(t),d1,,launch,,,\n", line: 2, column: 25, "emptyValue", mentions: "the app is empty"),
        BadInput("empty event", header + "\(t),d1,com.a,,,,\n", line: 2, column: 31, "emptyValue", mentions: "the event is empty"),
        BadInput("empty time", header + ",d1,com.a,launch,,,\n", line: 2, column: 1, "emptyValue", mentions: "the time is empty"),
        BadInput("negative bytes", header + "\(t),d1,com.a,fetch,newData,-5,\n", line: 2, column: 45, "badValue", mentions: "invalid bytes '-5' (expected a non-negative whole number"),
        BadInput("non-numeric bytes", header + "\(t),d1,com.a,fetch,newData,12kB,\n", line: 2, column: 45, "badValue", mentions: "invalid bytes '12kB'"),
        BadInput("fractional duration", header + "\(t),d1,com.a,launch,,,3.5\n", line: 2, column: 40, "badValue", mentions: "invalid duration_ms '3.5'"),
        BadInput("bytes beyond 64 bits", header + "\(t),d1,com.a,fetch,newData,99999999999999999999,\n", line: 2, column: 45, "badValue", mentions: "invalid bytes"),
        BadInput("impossible date", header + "2013-02-30T00:00:00Z,d1,com.a,launch,,,\n", line: 2, column: 9, "badTime", mentions: "day 30 does not exist"),
        BadInput("impossible date, quoted", header + "\"2013-02-30T00:00:00Z\",d1,com.a,launch,,,\n", line: 2, column: 10, "badTime", mentions: "day 30 does not exist"),
        BadInput("hour 24", header + "2013-11-09T24:00:00Z,d1,com.a,launch,,,\n", line: 2, column: 12, "badTime", mentions: "hour 24"),
        BadInput("time without offset", header + "2013-11-09T22:36:45,d1,com.a,launch,,,\n", line: 2, column: 20, "badTime", mentions: "no UTC offset"),
        BadInput("too few fields", header + "\(t),d1,com.a,launch\n", line: 2, column: 1, "fieldCount", mentions: "the row has 4 fields (expected 7"),
        BadInput("too many fields", header + "\(t),d1,com.a,launch,,,,\n", line: 2, column: 1, "fieldCount", mentions: "the row has 8 fields"),
        BadInput("one field", header + "\(t)\n", line: 2, column: 1, "fieldCount", mentions: "the row has 1 field (expected 7"),
        BadInput("unterminated quote", header + "\(t),d1,\"com.a,launch,,,\n", line: 2, column: 25, "unterminatedQuote", mentions: "never closed"),
        BadInput("text after a closing quote", header + "\(t),\"d1\"x,com.a,launch,,,\n", line: 2, column: 26, "badValue", mentions: "a ',' or the end of the line after a closing quote"),
        BadInput("error on a later line", header + "\(t),d1,com.a,launch,,,\n\n\(t),d1,com.a,launch,,,\n\(t),d1,com.a,launch,,-1,\n", line: 5, column: 39, "badValue", mentions: "invalid bytes '-1'"),
        BadInput("NUL in a device id", bytes: Array((header + "\(t),d").utf8) + [0] + Array("x,com.a,launch,,,\n".utf8), line: 2, column: 22, "controlCharacter", mentions: "the device id 'd\\u{0}x' holds the control character U+0000"),
        BadInput("NUL in a quoted app id", bytes: Array((header + "\(t),d1,\"com").utf8) + [0] + Array("\",launch,,,\n".utf8), line: 2, column: 26, "controlCharacter", mentions: "the app id 'com\\u{0}' holds"),
        BadInput("escape character in an app id", header + "\(t),d1,com.\u{1B}[31m,launch,,,\n", line: 2, column: 25, "controlCharacter", mentions: "U+001B"),
        BadInput("line break inside a quoted device id", header + "\(t),\"d\n1\",com.a,launch,,,\n", line: 2, column: 23, "controlCharacter", mentions: "U+000A"),
        BadInput("non-UTF-8", bytes: Array((header + "\(t),d1,ap").utf8) + [0xFF] + Array("p,launch,,,\n".utf8), line: 2, column: 27, "notUTF8", mentions: "not valid UTF-8"),
        BadInput("truncated UTF-8 sequence", bytes: Array((header + "\(t),d1,caf").utf8) + [0xC3] + Array(",launch,,,\n".utf8), line: 2, column: 28, "notUTF8", mentions: "not valid UTF-8"),
        BadInput("device id over the limit", header + "\(t),\(String(repeating: "d", count: 10_241)),com.a,launch,,,\n", line: 2, column: 22, "idTooLong", mentions: "the device id is 10241 bytes long (expected at most 10240 bytes"),
        BadInput("app id over the limit", header + "\(t),d1,\(String(repeating: "a", count: 10_241)),launch,,,\n", line: 2, column: 25, "idTooLong", mentions: "the app id is 10241 bytes long"),
        BadInput("rows over the limit", header + "\(t),d1,com.a,launch,,,\n\n\(t),d1,com.a,launch,,,\n\(t),d1,com.a,launch,,,\n", line: 4, column: 1, "tooManyEvents", mentions: "more than 2 rows, blank lines included", options: TraceOptions(maxEvents: 2)),
        BadInput("bytes over the decoded limit", header + String(repeating: "\n", count: 5000), line: 0, column: 0, "decodedTooLarge", mentions: "longer than 4096 bytes once decompressed", options: TraceOptions(maxDecodedBytes: 4096)),
        BadInput("line over the limit", header + "\(t),d1,\(String(repeating: "x", count: 100)),launch,,,\n", line: 2, column: 1, "lineTooLong", mentions: "longer than 64 bytes", options: TraceOptions(maxLineBytes: 64)),
        // The header (line 1, or later after blank lines).
        BadInput("missing column", "time,device,event\n\(t),d1,launch\n", line: 1, column: 1, "missingColumn", mentions: "the header has no 'app' column"),
        BadInput("missing time column", "device,app,event\nd1,com.a,launch\n", line: 1, column: 1, "missingColumn", mentions: "no 'time' column"),
        BadInput("unknown column", "time,device,app,event,colour\n\(t),d1,com.a,launch,red\n", line: 1, column: 23, "unknownColumn", mentions: "unknown column 'colour'"),
        BadInput("unknown column after blank lines", "\n\ntime,device,app,Event\n", line: 3, column: 17, "unknownColumn", mentions: "unknown column 'Event'"),
        BadInput("duplicate column", "time,device,app,event,time\n", line: 1, column: 23, "duplicateColumn", mentions: "column 'time' appears twice"),
        BadInput("non-UTF-8 header", bytes: Array("time,device,app,event,r".utf8) + [0xE9] + Array("sult\n".utf8), line: 1, column: 24, "notUTF8", mentions: "not valid UTF-8"),
        // The file as a whole.
        BadInput("empty file", "", line: 0, column: 0, "empty", mentions: "the file is empty"),
        BadInput("only blank lines", "\n\r\n \t\n", line: 0, column: 0, "empty", mentions: "the file is empty"),
        BadInput("only a byte order mark", "\u{FEFF}", line: 0, column: 0, "empty", mentions: "the file is empty"),
    ]

    static let jsonCases: [BadInput] = [
        BadInput("JSON bad event", #"{"time":"\#(t)","device":"d1","app":"com.a","event":"open"}"#, line: 1, column: 69, "badValue", mentions: "invalid event 'open'"),
        BadInput("JSON impossible date", #"{"time":"2013-02-30T00:00:00Z","device":"d1","app":"a","event":"launch"}"#, line: 1, column: 18, "badTime", mentions: "day 30"),
        BadInput("JSON fetch without result", #"{"time":"\#(t)","device":"d1","app":"a","event":"fetch"}"#, line: 1, column: 1, "emptyValue", mentions: "the result is empty"),
        BadInput("JSON fetch without result after one with", #"{"time":"\#(t)","device":"d1","app":"a","event":"fetch","result":"noData"}"# + "\n" + #"{"time":"\#(t)","device":"d1","app":"a","event":"fetch"}"#, line: 2, column: 1, "emptyValue", mentions: "the result is empty"),
        BadInput("JSON null result on a fetch", #"{"time":"\#(t)","device":"d1","app":"a","event":"fetch","result":null}"#, line: 1, column: 81, "emptyValue", mentions: "the result is empty"),
        BadInput("JSON result on a launch", #"{"time":"\#(t)","device":"d1","app":"a","event":"launch","result":"noData"}"#, line: 1, column: 83, "badValue", mentions: "no result on a launch event"),
        BadInput("JSON empty device on a launch", #"{"time":"\#(t)","device":"","app":"a","event":"launch"}"#, line: 1, column: 42, "emptyValue", mentions: "the device is empty"),
        BadInput("JSON negative bytes", #"{"time":"\#(t)","device":"d","app":"a","event":"launch","bytes":-5}"#, line: 1, column: 80, "badValue", mentions: "invalid bytes '-5'"),
        BadInput("JSON non-numeric bytes", #"{"time":"\#(t)","device":"d","app":"a","event":"launch","bytes":"5k"}"#, line: 1, column: 81, "badValue", mentions: "invalid bytes '5k'"),
        BadInput("JSON unknown key", #"{"time":"\#(t)","colour":"red","device":"d","app":"a","event":"launch"}"#, line: 1, column: 32, "unknownKey", mentions: "unknown key 'colour' in the record"),
        BadInput("JSON duplicate key", #"{"time":"\#(t)","time":"\#(t)","device":"d","app":"a","event":"launch"}"#, line: 1, column: 32, "duplicateKey", mentions: "key 'time' appears twice in the record"),
        BadInput("JSON missing key", #"{"time":"\#(t)","device":"d","event":"launch"}"#, line: 1, column: 1, "missingKey", mentions: "the record has no 'app' key"),
        BadInput("JSON unknown key on a later line", "{\"time\":\"\(t)\",\"device\":\"d\",\"app\":\"a\",\"event\":\"launch\"}\n\n{\"time\":\"\(t)\",\"device\":\"d\",\"app\":\"a\",\"event\":\"launch\",\"foo\":1}\n", line: 3, column: 72, "unknownKey", mentions: "unknown key 'foo'"),
        BadInput("JSON missing key on a later line", "{\"time\":\"\(t)\",\"device\":\"d\",\"app\":\"a\",\"event\":\"launch\"}\n{\"time\":\"\(t)\",\"device\":\"d\",\"app\":\"a\"}\n", line: 2, column: 1, "missingKey", mentions: "the record has no 'event' key"),
        BadInput("JSON NUL in a device id", #"{"time":"\#(t)","device":"d\u0000x","app":"a","event":"launch"}"#, line: 1, column: 42, "controlCharacter", mentions: "the device id 'd\\u{0}x' holds the control character U+0000"),
        BadInput("JSON tab in an app id", #"{"time":"\#(t)","device":"d","app":"a\tb","event":"launch"}"#, line: 1, column: 52, "controlCharacter", mentions: "the app id 'a\\u{9}b' holds the control character U+0009"),
        BadInput("JSON DEL in a device id", "{\"time\":\"\(t)\",\"device\":\"d\u{7F}\",\"app\":\"a\",\"event\":\"launch\"}", line: 1, column: 42, "controlCharacter", mentions: "U+007F"),
        BadInput("JSON nested object", #"{"time":"\#(t)","device":{"id":"d"},"app":"a","event":"launch"}"#, line: 1, column: 41, "badJSON", mentions: "the value of 'device' is an object or array"),
        BadInput("JSON nested array", #"{"time":"\#(t)","device":"d","app":["a"],"event":"launch"}"#, line: 1, column: 51, "badJSON", mentions: "the value of 'app' is an object or array"),
        BadInput("JSON boolean", #"{"time":"\#(t)","device":"d","app":"a","event":true}"#, line: 1, column: 63, "badJSON", mentions: "not a string, number or null"),
        BadInput("JSON unclosed object", #"{"time":"\#(t)","device":"d","app":"a","event":"launch""#, line: 1, column: 71, "badJSON", mentions: "the object is never closed"),
        BadInput("JSON text after the object", #"{"time":"\#(t)","device":"d","app":"a","event":"launch"} x"#, line: 1, column: 73, "badJSON", mentions: "text after the end of the object"),
        BadInput("JSON line that is not an object", "{\"time\":\"\(t)\",\"device\":\"d\",\"app\":\"a\",\"event\":\"launch\"}\n42\n", line: 2, column: 1, "badJSON", mentions: "the line is not a JSON object"),
        BadInput("JSON line that is an array", "{\"time\":\"\(t)\",\"device\":\"d\",\"app\":\"a\",\"event\":\"launch\"}\n[1,2]\n", line: 2, column: 1, "jsonArray", mentions: "JSON Lines wants one JSON object per line"),
        BadInput("JSON unknown escape", #"{"time":"\#(t)","device":"d\q","app":"a","event":"launch"}"#, line: 1, column: 43, "badJSON", mentions: "unknown escape"),
        BadInput("JSON lone surrogate", #"{"time":"\#(t)","device":"\ud83d","app":"a","event":"launch"}"#, line: 1, column: 42, "badJSON", mentions: "lone UTF-16 surrogate"),
        BadInput("JSON short \\u escape", #"{"time":"\#(t)","device":"\u12","app":"a","event":"launch"}"#, line: 1, column: 42, "badJSON", mentions: "four hex digits"),
        BadInput("JSON non-UTF-8", bytes: Array(#"{"time":"\#(t)","device":"d"#.utf8) + [0xFF] + Array(#"","app":"a","event":"launch"}"#.utf8), line: 1, column: 43, "notUTF8", mentions: "not valid UTF-8"),
    ]

    @Test(arguments: csvCases + jsonCases)
    func pointsAtTheFault(input: BadInput) throws {
        let dir = try TemporaryDirectory()
        let path = try dir.write(input.name.contains("JSON") ? "bad.jsonl" : "bad.csv", bytes: input.bytes)
        let error = traceError(path, options: input.options)
        try #require(error != nil, "\(input.name) read without an error")
        #expect(error?.file == path)
        #expect(error.map { caseName($0.problem) } == input.problem)
        #expect(error?.line == input.line)
        #expect(error?.column == input.column)
        let place = input.line == 0 ? path : "\(path):\(input.line):\(input.column)"
        #expect(error?.description == "\(place): \(error!.problem.message)")
        #expect(error?.description.contains(input.mentions) == true, "\(error!.description)")
        // Every message says what was expected, in parentheses, at its end.
        #expect(error?.description.hasSuffix(")") == true)
    }

    @Test func rejectsALineLongerThanOneMebibyte() throws {
        let dir = try TemporaryDirectory()
        let longApp = String(repeating: "x", count: (1 << 20) + 1)
        let path = try dir.write("long.csv", header + "\(t),d1,com.a,launch,,,\n\(t),d1,\(longApp),launch,,,\n\(t),d1,com.a,launch,,,\n")
        let error = traceError(path)
        #expect(error.map { caseName($0.problem) } == "lineTooLong")
        #expect(error?.description.hasPrefix("\(path):3:1: the line is longer than 1 MiB") == true, "\(String(describing: error))")
    }

    @Test func acceptsALineJustUnderTheLimit() throws {
        let app = String(repeating: "y", count: 100)
        let line = "\(t),d1,\(app),launch,,,"
        let trace = try readTrace(text: header + line + "\n", options: TraceOptions(maxLineBytes: line.utf8.count))
        #expect(trace.events.map(\.app) == [app])
    }

    @Test func rejectsAnUnterminatedQuoteThatRunsPastTheLimit() throws {
        let dir = try TemporaryDirectory()
        var text = header + "\(t),d1,\"open quote,launch,,,\n"
        for _ in 0..<20 { text += "\(t),d1,com.a,launch,,,\n" }
        let path = try dir.write("quote.csv", text)
        let error = traceError(path, options: TraceOptions(maxLineBytes: 256))
        #expect(error.map { caseName($0.problem) } == "lineTooLong")
        #expect(error?.line == 2)
    }

    @Test func reportsAFileThatCannotBeOpened() throws {
        let dir = try TemporaryDirectory()
        let missing = dir.path + "/missing.csv"
        let error = traceError(missing)
        #expect(error.map { caseName($0.problem) } == "cannotOpen")
        #expect(error?.description.hasPrefix("\(missing): cannot read the file: No such file or directory") == true)
        let directory = traceError(dir.path)
        #expect(directory?.description.contains("it is a directory") == true)
    }

    @Test func skipsInvalidRowsWhenAskedAndReportsEach() throws {
        let dir = try TemporaryDirectory()
        let path = try dir.write("mixed.csv", header + """
            \(t),d1,com.a,launch,,,
            \(t),,com.a,launch,,,
            \(t),d1,com.a,fetch,,,
            \(t),d2,com.a,launch,,,
            \(t),d2,com.a,launch,,12kB,

            """)
        let symbols = SymbolTable()
        let reader = try TraceReader(path: path, symbols: symbols)
        var batch: [EncodedEvent] = []
        var rejected: [(TraceError, String)] = []
        while try reader.next(into: &batch, onInvalid: { rejected.append(($0, $1)) }) {}
        #expect(batch.map(\.line) == [2, 5])
        #expect(rejected.map { "\($0.0.line):\($0.0.column)" } == ["3:22", "4:37", "6:39"])
        #expect(rejected.map(\.1) == ["\(t),,com.a,launch,,,", "\(t),d1,com.a,fetch,,,", "\(t),d2,com.a,launch,,12kB,"])
    }

    @Test func throwsFileLevelProblemsEvenWhenSkippingRows() throws {
        let dir = try TemporaryDirectory()
        let path = try dir.write("header.csv", "time,device,app,colour\n\(t),d,a,red\n")
        let reader = try TraceReader(path: path, symbols: SymbolTable())
        var batch: [EncodedEvent] = []
        var rejected = 0
        let error = #expect(throws: TraceError.self) {
            while try reader.next(into: &batch, onInvalid: { _, _ in rejected += 1 }) {}
        }
        #expect(error.map { caseName($0.problem) } == "unknownColumn")
        #expect(rejected == 0)
    }

    @Test(arguments: [(1 << 20, "1 MiB"), (2 << 20, "2 MiB"), (1000, "1000 bytes")])
    func describesTheLineLimitInItsUnit(limit: Int, text: String) {
        #expect(TraceError.Problem.lineTooLong(limit: limit).message.contains("longer than \(text)"))
    }

    @Test func omitsLineAndColumnWhenTheyDoNotApply() {
        #expect(TraceError(file: "a.csv", line: 0, column: 0, problem: .empty).description.hasPrefix("a.csv: the file is empty"))
        #expect(TraceError(file: "a.csv", line: 3, column: 0, problem: .notUTF8).description.hasPrefix("a.csv:3: the line"))
        #expect(TraceError(file: "-", line: 3, column: 7, problem: .notUTF8).description.hasPrefix("-:3:7: the line"))
    }
}

struct WriteErrorTests {
    /// A file that cannot be created is a write failure naming the path and the system's
    /// reason, not "cannot read the file".
    @Test func aFileThatCannotBeCreatedIsAWriteFailure() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path + "/missing/out.csv"
        let error = #expect(throws: TraceError.self) { try FileSink(path: path) }
        #expect(error.map { caseName($0.problem) } == "cannotWrite")
        #expect(error?.description == "\(path): cannot write the file: No such file or directory (check that its directory exists and is writable, and the free space)")
        let gzip = #expect(throws: TraceError.self) { try GzipSink(path: path + ".gz") }
        #expect(gzip.map { caseName($0.problem) } == "cannotWrite")
    }
}
