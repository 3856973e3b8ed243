import FetchCastTrace
import Testing

/// Files in a shape close to a trace's: the error says what the file is and how to convert it,
/// not a puzzling column or field count.
struct LineEndAndArrayTests {
    static let header = "time,device,app,event,result,bytes,duration_ms"
    static let rows = ["2014-01-01T08:00:00Z,d,mail,launch,,,", "2014-01-01T08:01:00Z,d,chat,launch,,,"]

    func problem(_ text: String, name: String = "t.csv") throws -> TraceError {
        do {
            _ = try readTrace(text: text, name: name)
        } catch let error as TraceError {
            return error
        }
        Issue.record("read without an error")
        return TraceError(file: "", line: 0, column: 0, problem: .empty)
    }

    @Test func bareCRLineEndsAreNamed() throws {
        let e = try problem(([Self.header] + Self.rows).joined(separator: "\r") + "\r")
        #expect(e.problem == .carriageReturnLineEnds && e.line == 1, "\(e)")
        #expect(e.description.contains("bare CR") && e.description.contains("tr '\\r' '\\n'"), "\(e)")
    }

    @Test func rowsWithBareCRUnderAnLFHeaderAreNamed() throws {
        let e = try problem(Self.header + "\n" + Self.rows.joined(separator: "\r") + "\r")
        #expect(e.problem == .carriageReturnLineEnds && e.line == 2, "\(e)")
    }

    @Test func crlfLineEndsStillRead() throws {
        #expect(try readTrace(text: ([Self.header] + Self.rows).joined(separator: "\r\n") + "\r\n").events.count == 2)
    }

    @Test(arguments: [
        #"[{"time":"2014-01-01T08:00:00Z","device":"d","app":"mail","event":"launch"}]"#,
        "[\n  {\"time\": \"2014-01-01T08:00:00Z\", \"device\": \"d\", \"app\": \"mail\", \"event\": \"launch\"}\n]\n",
    ])
    func aWholeJSONArrayIsNamed(text: String) throws {
        let e = try problem(text, name: "t.json")
        #expect(e.problem == .jsonArray && e.line == 1, "\(e)")
        #expect(e.description.contains("one JSON object per line") && e.description.contains("jq -c '.[]'"), "\(e)")
    }

    @Test func anArrayLineInJSONLinesIsNamed() throws {
        let text = #"""
            {"time":"2014-01-01T08:00:00Z","device":"d","app":"mail","event":"launch"}
            [{"time":"2014-01-01T08:01:00Z","device":"d","app":"chat","event":"launch"}]

            """#
        let e = try problem(text, name: "t.jsonl")
        #expect(e.problem == .jsonArray && e.line == 2, "\(e)")
    }
}
