import FetchCastCore
import Testing
import FetchCastTrace

struct TraceReaderJSONLinesTests {
    @Test func readsOneObjectPerLine() throws {
        let trace = try readTrace(text: """
            {"time":"2013-11-09T23:36:45+01:00","device":"dev-1","app":"com.example.news","event":"launch","duration_ms":1500}
            {"time":"2013-11-09T22:36:46Z","device":"dev-1","app":"com.example.news","event":"fetch","result":"newData","bytes":2048,"duration_ms":310}
            {"time":"2013-11-09T22:36:49Z","device":"","app":"com.example.news","event":"publish"}

            """, name: "t.jsonl")
        #expect(trace.format == .jsonLines)
        #expect(trace.events == [
            TraceEvent(timeMicros: t0, utcOffsetSeconds: 3600, device: "dev-1", app: "com.example.news", kind: .launch, durationMs: 1500),
            TraceEvent(timeMicros: t0 + 1_000_000, device: "dev-1", app: "com.example.news", kind: .fetch, result: .newData, bytes: 2048, durationMs: 310),
            TraceEvent(timeMicros: t0 + 4_000_000, device: "", app: "com.example.news", kind: .publish),
        ])
        #expect(trace.lines == [1, 2, 3])
    }

    @Test func recognisesTheFormatByContentNotName() throws {
        let json = try readTrace(text: #"{"time":"2013-11-09T22:36:45Z","device":"d","app":"a","event":"launch"}"#, name: "trace.csv")
        #expect(json.format == .jsonLines)
        let csv = try readTrace(text: "time,device,app,event\n2013-11-09T22:36:45Z,d,a,launch\n", name: "trace.jsonl")
        #expect(csv.format == .csv)
        #expect(json.events == csv.events)
    }

    @Test(arguments: [
        (#"d\"1"#, "d\"1"),
        (#"back\\slash"#, "back\\slash"),
        (#"a\/b"#, "a/b"),
        (#"caf\u00e9"#, "café"),
        (#"caf\u00E9"#, "café"),
        (#"\u5e94\u7528"#, "应用"),
        (#"\ud83d\ude00!"#, "😀!"),
        ("café", "café"),
        (#"x\u0041\"y"#, "xA\"y"),
    ])
    func unescapesStrings(json: String, value: String) throws {
        let trace = try readTrace(text: #"{"time":"2013-11-09T22:36:45Z","device":"\#(json)","app":"\#(json)!","event":"launch"}"#, name: "t.jsonl")
        #expect(trace.events.map(\.device) == [value])
        #expect(trace.events.map(\.app) == [value + "!"])
    }

    /// Escapes that decode to control characters decode exactly, and are then refused in an id.
    @Test(arguments: [
        (#"tab\there"#, #"tab\u{9}here"#),
        (#"new\nline"#, #"new\u{A}line"#),
        (#"\b\f\r"#, #"\u{8}\u{C}\u{D}"#),
        (#"nul\u0000"#, #"nul\u{0}"#),
        (#"del\u007f"#, #"del\u{7F}"#),
    ])
    func unescapesControlCharactersAndRefusesThemInIds(json: String, shown: String) throws {
        let device = try traceError(text: #"{"time":"2013-11-09T22:36:45Z","device":"\#(json)","app":"a","event":"launch"}"#, name: "t.jsonl")
        #expect(device.map { caseName($0.problem) } == "controlCharacter")
        #expect(device?.problem.message.hasPrefix("the device id '\(shown)' holds the control character U+") == true, "\(String(describing: device))")
        let app = try traceError(text: #"{"time":"2013-11-09T22:36:45Z","device":"d","app":"\#(json)","event":"launch"}"#, name: "t.jsonl")
        #expect(app?.problem.message.hasPrefix("the app id '\(shown)'") == true, "\(String(describing: app))")
    }

    @Test func readsNumbersAndNulls() throws {
        let trace = try readTrace(text: """
            {"time":1384036605,"device":"d","app":"a","event":"fetch","result":"noData","bytes":0,"duration_ms":12}
            {"time":"1384036605","device":"d","app":"a","event":"launch","result":null,"bytes":null,"duration_ms":null}

            """, name: "t.jsonl", options: TraceOptions(defaultUTCOffsetSeconds: 3600))
        #expect(trace.events == [
            TraceEvent(timeMicros: t0, utcOffsetSeconds: 3600, device: "d", app: "a", kind: .fetch, result: .noData, bytes: 0, durationMs: 12),
            TraceEvent(timeMicros: t0, utcOffsetSeconds: 3600, device: "d", app: "a", kind: .launch),
        ])
    }

    @Test func acceptsKeysInAnyOrderAndSpacing() throws {
        let trace = try readTrace(text: "\t{ \"event\" : \"launch\" ,\t\"app\":\"a\", \"device\" :\"d\",\"time\": \"2013-11-09T22:36:45Z\" } \r\n", name: "t.jsonl")
        #expect(trace.events == [TraceEvent(timeMicros: t0, device: "d", app: "a", kind: .launch)])
    }

    @Test func skipsBlankLinesAndCountsThem() throws {
        let row = #"{"time":"2013-11-09T22:36:45Z","device":"d","app":"a","event":"launch"}"#
        let trace = try readTrace(text: "\n" + row + "\n\n" + row, name: "t.jsonl")
        #expect(trace.lines == [2, 4])
    }
}
