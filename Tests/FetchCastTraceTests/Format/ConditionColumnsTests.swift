import FetchCastCore
import Testing
import FetchCastTrace
import FetchCastTestSupport

private let t = "2013-11-09T22:36:45Z"
private let wide = "time,device,app,event,result,bytes,duration_ms,network,power,battery,low_power\n"

struct ConditionColumnsTests {
    @Test func readsEverySubsetOfTheConditionColumns() throws {
        let trace = try readTrace(text: wide + """
            \(t),d1,,state,,,,wifi,charging,80,off
            \(t),d1,,state,,,,cellular,,,
            \(t),d1,,state,,,,,battery,,
            \(t),d1,,state,,,,,,0,
            \(t),d1,,state,,,,offline,,100,on
            \(t),d1,com.a,launch,,,,,,,

            """)
        #expect(trace.events.map(\.kind) == [.state, .state, .state, .state, .state, .launch])
        #expect(trace.events.map(\.app) == ["", "", "", "", "", "com.a"])
        #expect(trace.events.map(\.conditions) == [
            ConditionChange(network: .wifi, power: .charging, battery: 80, lowPower: false),
            ConditionChange(network: .cellular),
            ConditionChange(power: .battery),
            ConditionChange(battery: 0),
            ConditionChange(network: .offline, battery: 100, lowPower: true),
            ConditionChange(),
        ])
    }

    @Test func readsStateRecordsFromJSONLines() throws {
        let trace = try readTrace(text: """
            {"time":"\(t)","device":"d1","app":"","event":"state","network":"wifi","battery":42}
            {"time":"\(t)","device":"d1","app":"","event":"state","low_power":"on","power":"battery"}

            """, name: "t.jsonl")
        #expect(trace.events.map(\.conditions) == [
            ConditionChange(network: .wifi, battery: 42), ConditionChange(power: .battery, lowPower: true),
        ])
    }

    @Test func aJSONStateRecordMayLeaveOutItsApp() throws {
        let trace = try readTrace(text: """
            {"time":"\(t)","device":"d1","event":"state","network":"wifi"}
            {"time":"\(t)","device":"d1","app":null,"event":"state","power":"charging"}

            """, name: "t.jsonl")
        #expect(trace.events.map(\.kind) == [.state, .state])
        #expect(trace.events.map(\.app) == ["", ""])
        #expect(trace.events.map(\.conditions) == [ConditionChange(network: .wifi), ConditionChange(power: .charging)])
        // Any other record still needs its "app".
        let error = #expect(throws: TraceError.self) {
            try readTrace(text: #"{"time":"\#(t)","device":"d1","event":"launch"}"# + "\n", name: "t.jsonl")
        }
        #expect(error?.description.contains("app") == true)
    }

    @Test func keepsTracesWithoutConditionColumnsAsTheyWere() throws {
        let trace = try readTrace(text: header + "\(t),d1,com.a,launch,,,\n\(t),d1,com.a,fetch,newData,10,\n")
        #expect(trace.events.allSatisfy { $0.conditions.isEmpty })
        #expect(trace.events.map(\.kind) == [.launch, .fetch])
    }

    // Columns are 1-based bytes: "T,d1,," is 25 bytes, so `state` starts at 26 and the
    // first condition column after ",,,," at 35.
    static let cases: [BadInput] = [
        BadInput("state with an app", wide + "\(t),d1,com.a,state,,,,wifi,,,\n", line: 2, column: 25, "badValue",
                 mentions: "invalid app 'com.a' (expected an empty app on a state event"),
        BadInput("state setting nothing", wide + "\(t),d1,,state,,,,,,,\n", line: 2, column: 26, "stateSetsNothing",
                 mentions: "the state row sets none of network, power, battery, low_power"),
        BadInput("state without condition columns", header + "\(t),d1,,state,,,\n", line: 2, column: 26, "stateSetsNothing",
                 mentions: "sets none of"),
        BadInput("network on a launch", wide + "\(t),d1,com.a,launch,,,,wifi,,,\n", line: 2, column: 41, "badValue",
                 mentions: "invalid network 'wifi' (expected nothing on a launch event; network, power, battery and low_power belong to state events)"),
        BadInput("battery on a fetch", wide + "\(t),d1,com.a,fetch,noData,,,,,50,\n", line: 2, column: 48, "badValue",
                 mentions: "invalid battery '50' (expected nothing on a fetch event"),
        BadInput("bad network", wide + "\(t),d1,,state,,,,5g,,,\n", line: 2, column: 35, "badValue",
                 mentions: "invalid network '5g' (expected wifi, cellular, offline or nothing)"),
        BadInput("bad power", wide + "\(t),d1,,state,,,,,plugged,,\n", line: 2, column: 36, "badValue",
                 mentions: "invalid power 'plugged' (expected charging, battery or nothing)"),
        BadInput("battery over 100", wide + "\(t),d1,,state,,,,,,101,\n", line: 2, column: 37, "badValue",
                 mentions: "invalid battery '101' (expected a whole percentage from 0 to 100 or nothing)"),
        BadInput("fractional battery", wide + "\(t),d1,,state,,,,,,50.5,\n", line: 2, column: 37, "badValue",
                 mentions: "invalid battery '50.5'"),
        BadInput("bad low_power", wide + "\(t),d1,,state,,,,,,,yes\n", line: 2, column: 38, "badValue",
                 mentions: "invalid low_power 'yes' (expected on, off or nothing)"),
        BadInput("state without a device", wide + "\(t),,,state,,,,wifi,,,\n", line: 2, column: 22, "emptyValue",
                 mentions: "the device is empty"),
        BadInput("result on a state", wide + "\(t),d1,,state,newData,,,wifi,,,\n", line: 2, column: 32, "badValue",
                 mentions: "no result on a state event"),
        BadInput("JSON network on a publish", #"{"time":"\#(t)","device":"","app":"a","event":"publish","network":"wifi"}"#,
                 line: 1, column: 83, "badValue", mentions: "invalid network 'wifi' (expected nothing on a publish event"),
        BadInput("JSON battery below 0", #"{"time":"\#(t)","device":"d","app":"","event":"state","battery":-1}"#,
                 line: 1, column: 80, "badValue", mentions: "invalid battery '-1'"),
    ]

    @Test(arguments: cases)
    func pointsAtTheFault(input: BadInput) throws {
        let dir = try TemporaryDirectory()
        let path = try dir.write(input.name.contains("JSON") ? "bad.jsonl" : "bad.csv", bytes: input.bytes)
        let error = traceError(path)
        try #require(error != nil, "\(input.name) read without an error")
        #expect(error.map { caseName($0.problem) } == input.problem)
        #expect(error?.line == input.line)
        #expect(error?.column == input.column, "\(error!.description)")
        #expect(error?.description.contains(input.mentions) == true, "\(error!.description)")
        #expect(error?.description.hasSuffix(")") == true)
    }

    @Test func encodedEventsStaySixtyFourBytes() {
        #expect(MemoryLayout<EncodedEvent>.stride == 64)
        #expect(MemoryLayout<ConditionChange>.size == 5)
    }
}
