import FetchCastCore
import Foundation
import Testing
import FetchCastTestSupport
@testable import FetchCastExport
import FetchCastPredict
import FetchCastStore
import FetchCastTrace

/// A fresh store in a temporary directory, removed when released.
private final class ExportFixture {
    private let temporary: TemporaryStore
    var directory: String { temporary.directory }
    let store: Store

    init(_ trace: String) throws {
        temporary = try TemporaryStore()
        store = try temporary.open()
        let file = try temporary.write("trace.csv", trace)
        _ = try Ingestor(store: store, options: .init(now: { 1_384_036_605 })).ingest(path: file)
    }

    func export(_ request: ExportRequest) async throws -> [String] {
        var out = ""
        try await Exporter.export(request, from: store, to: &out)
        return out.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }
}

private let trace = """
    time,device,app,event,result,bytes,duration_ms
    2013-11-11T08:00:00+01:00,a,mail,launch,,,1000
    2013-11-11T08:10:00+01:00,a,"news, daily",launch,,,
    2013-11-11T09:00:00+01:00,b,mail,launch,,,
    2013-11-11T09:05:00+01:00,a,mail,launch,,,
    2013-11-11T09:30:00+01:00,,"news, daily",publish,,,
    2013-11-12T08:00:00+01:00,a,mail,launch,,,
    2013-11-12T08:20:00+01:00,a,"news, daily",launch,,,
    2013-11-12T09:00:00+01:00,a,"news, daily",fetch,noData,12,40

    """

struct ExportTests {
    @Test(arguments: ExportKind.allCases)
    func csvHeaderIsTheDocumentedColumns(kind: ExportKind) async throws {
        let fixture = try ExportFixture(trace)
        let lines = try await fixture.export(ExportRequest(kind: kind))
        #expect(lines.first == kind.columns.joined(separator: ","))
    }

    @Test func eventColumnsAreTheEventsView() {
        #expect(ExportKind.events.columns == ["time_utc", "utc_offset_s", "device", "app", "event", "result", "bytes",
                                              "duration_ms", "time_us", "file_id", "line"])
        #expect(ExportKind.model.columns == ["device", "app", "weekday", "hour", "launch_probability", "session_rate_per_hour",
                                             "new_data_rate_per_hour", "observed_hours", "sessions"])
        #expect(ExportKind.cousage.columns == ["device", "app", "next_app", "probability", "support"])
        #expect(ExportKind.predictions.columns == ["device", "app", "fetch_at", "launch_probability", "new_data_probability", "reason"])
    }

    @Test func eventsAreInTimeOrderWithQuotedFieldsAndEmptyNulls() async throws {
        let lines = try await ExportFixture(trace).export(ExportRequest(kind: .events))
        #expect(lines.count == 9)
        #expect(lines[1] == "1384153200,3600,a,mail,launch,,,1000,1384153200000000,1,2")
        #expect(lines[2].hasPrefix("1384153800,3600,a,\"news, daily\",launch,,,,"))
        #expect(lines[5].hasPrefix("1384158600,3600,,\"news, daily\",publish,,,,"))
        #expect(lines[8].hasPrefix("1384243200,3600,a,\"news, daily\",fetch,noData,12,40,"))
    }

    @Test func csvEscapingDoublesQuotesAndQuotesLineBreaks() {
        var out = ""
        var writer = ExportWriter<String>(columns: ["a", "b,c"], format: .csv)
        writer.write([.text("say \"hi\""), .text("two\nlines")], to: &out)
        writer.write([.null, .real(0.5, decimals: 3)], to: &out)
        #expect(out == "a,\"b,c\"\n\"say \"\"hi\"\"\",\"two\nlines\"\n,0.500\n")
        #expect(writer.rows == 2)
    }

    @Test func emptyTableStillHasItsHeader() {
        var out = ""
        var writer = ExportWriter<String>(columns: ["x", "y"], format: .csv)
        writer.finish(to: &out)
        #expect(out == "x,y\n")
    }

    @Test func jsonLinesCarryTheSchemaAndTypedValues() async throws {
        struct Row: Decodable {
            var schema: Int
            var time_utc: Int64
            var device: String
            var app: String
            var result: String?
            var bytes: Int64?
        }
        let lines = try await ExportFixture(trace).export(ExportRequest(kind: .events, app: "news, daily", format: .json))
        let rows = try lines.map { try JSONDecoder().decode(Row.self, from: Data($0.utf8)) }
        #expect(rows.count == 4)
        #expect(rows.allSatisfy { $0.schema == 1 && $0.app == "news, daily" })
        #expect(rows[0].result == nil && rows[0].bytes == nil)
        #expect(rows[3].result == "noData" && rows[3].bytes == 12)
    }

    @Test func eventFiltersSelectDeviceAppAndHalfOpenTimeRange() async throws {
        let fixture = try ExportFixture(trace)
        await #expect(try fixture.export(ExportRequest(kind: .events, device: "b")).count == 2)
        await #expect(try fixture.export(ExportRequest(kind: .events, device: "")).count == 2)  // the publish
        await #expect(try fixture.export(ExportRequest(kind: .events, device: "a", app: "mail")).count == 4)
        // [08:10, 09:05) local on Nov 11: the 08:10 and 09:00 launches, not the 09:05 one.
        let window = try await fixture.export(ExportRequest(kind: .events, from: 1_384_153_800, to: 1_384_157_100))
        #expect(window.count == 3)
    }

    @Test func unknownNamesAreErrors() async throws {
        let fixture = try ExportFixture(trace)
        await #expect(throws: ExportError.unknownDevice("zz")) { try await fixture.export(ExportRequest(kind: .events, device: "zz")) }
        await #expect(throws: ExportError.unknownDevice("zz")) { try await fixture.export(ExportRequest(kind: .model, device: "zz")) }
        await #expect(throws: ExportError.unknownApp("zz")) { try await fixture.export(ExportRequest(kind: .cousage, app: "zz")) }
        await #expect(throws: ExportError.emptyWindow(from: 10, to: 5)) { try await fixture.export(ExportRequest(kind: .events, from: 10, to: 5)) }
    }

    @Test func modelHas168RowsPerDeviceAppWithConsistentProbabilities() async throws {
        let lines = try await ExportFixture(trace).export(ExportRequest(kind: .model, device: "a"))
        let rows = lines.dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        // Device a launched two apps; the quoted app name holds a comma, so check via the mail rows.
        let mail = rows.filter { $0[1] == "mail" }
        #expect(mail.count == 168)
        #expect(Set(mail.map { "\($0[2]) \($0[3])" }).count == 168)
        for r in mail {
            let p = Double(r[4])!, rate = Double(r[5])!
            #expect(p >= 0 && p <= 1)
            #expect(abs(p - (1 - exp(-rate))) < 2e-6)
        }
        // Monday 08:00 local holds one session of mail.
        #expect(mail.first { $0[2] == "0" && $0[3] == "8" }.map { Double($0[8])! > 0 } == true)
        #expect(lines.count == 1 + 2 * 168)
    }

    @Test func newDataRateIsEmptyWithoutContentEvidenceAndSetWithPublishes() async throws {
        let lines = try await ExportFixture(trace).export(ExportRequest(kind: .model, device: "a", format: .json))
        struct Row: Decodable { var app: String; var new_data_rate_per_hour: Double? }
        let rows = try lines.map { try JSONDecoder().decode(Row.self, from: Data($0.utf8)) }
        #expect(rows.filter { $0.app == "mail" }.allSatisfy { $0.new_data_rate_per_hour == nil })
        #expect(rows.filter { $0.app == "news, daily" }.allSatisfy { $0.new_data_rate_per_hour != nil })
    }

    @Test func topAppsLimitsModelRows() async throws {
        let lines = try await ExportFixture(trace).export(ExportRequest(kind: .model, device: "a", topApps: 1))
        #expect(lines.count == 1 + 168)
    }

    @Test func cousageRowsHaveProbabilitiesAndSupport() async throws {
        let lines = try await ExportFixture(trace).export(ExportRequest(kind: .cousage, device: "a", format: .json))
        struct Row: Decodable { var device: String; var app: String; var next_app: String; var probability: Double; var support: Double }
        let rows = try lines.map { try JSONDecoder().decode(Row.self, from: Data($0.utf8)) }
        #expect(rows.contains { $0.app == "mail" && $0.next_app == "news, daily" })
        #expect(rows.allSatisfy { $0.device == "a" && $0.probability >= 0 && $0.probability <= 1 && $0.support > 0 })
    }

    @Test func predictionsStayInTheWindowAndMatchPredict() async throws {
        let fixture = try ExportFixture(trace)
        let from = 1_384_240_801.0, to = from + 2 * 86_400  // one second after the last launch of news
        let lines = try await fixture.export(ExportRequest(kind: .predictions, device: "a", from: from, to: to, format: .json))
        struct Row: Decodable { var fetch_at: String; var launch_probability: Double; var new_data_probability: Double }
        let rows = try lines.map { try JSONDecoder().decode(Row.self, from: Data($0.utf8)) }
        #expect(!rows.isEmpty)
        for r in rows {
            let t = try #require(Timestamp.parseArgument(r.fetch_at))
            #expect(t >= from && t < to)
            #expect((0...1).contains(r.launch_probability) && (0...1).contains(r.new_data_probability))
        }
        let snapshot = try await ModelRepository(store: fixture.store).refresh()
        let direct = try await Predictor.predict(PredictionRequest(device: "a", at: from, count: .max), snapshot: snapshot)
            .filter { $0.fetchAtUnix < from + 86_400 }
        #expect(Array(rows.prefix(direct.count)).map(\.fetch_at) == direct.map(\.fetchAt))
    }
}
