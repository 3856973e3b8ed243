import Foundation
import Testing

/// One line of `fetchcast devices --format json`.
struct DeviceJSON: Decodable, Equatable {
    struct AppLaunches: Decodable, Equatable {
        var app: String
        var launches: Int
    }

    var schema: Int
    var device: String
    var events: Int
    var launches: Int
    var firstEvent: String
    var lastEvent: String
    var topApps: [AppLaunches]
}

/// `fetchcast devices`, run as the built binary.
struct DevicesCLITests {
    /// dev-a launches four apps (a1 ×3, a2 ×2, a3 ×2, a4 ×1) and fetches a5; dev-b launches b1 once.
    static let trace = """
        time,device,app,event,result,bytes,duration_ms
        2013-11-09T08:00:00Z,dev-a,a1,launch,,,
        2013-11-09T08:01:00Z,dev-a,a2,launch,,,
        2013-11-09T08:02:00Z,dev-a,a1,launch,,,
        2013-11-09T08:03:00Z,dev-a,a3,launch,,,
        2013-11-09T08:04:00Z,dev-a,a5,fetch,noData,,
        2013-11-09T08:05:00Z,dev-a,a2,launch,,,
        2013-11-09T08:06:00Z,dev-a,a4,launch,,,
        2013-11-09T08:07:00Z,,a1,publish,,,
        2013-11-10T09:00:00Z,dev-b,b1,launch,,,
        2013-11-10T09:30:00Z,dev-a,a1,launch,,,
        2013-11-10T09:45:00Z,dev-a,a3,launch,,,

        """

    @Test func listsEachDeviceWithItsMostLaunchedApps() throws {
        let ws = try Workspace()
        try ws.write("t.csv", Self.trace)
        try #require(try ws.run(["ingest", "t.csv"]).status == 0)
        let result = try ws.run(["devices", "--format", "json"])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err.isEmpty)
        let devices = try result.jsonLines(DeviceJSON.self)
        #expect(devices == [
            DeviceJSON(schema: 1, device: "dev-a", events: 9, launches: 8,
                       firstEvent: "2013-11-09T08:00:00Z", lastEvent: "2013-11-10T09:45:00Z",
                       topApps: [.init(app: "a1", launches: 3), .init(app: "a2", launches: 2), .init(app: "a3", launches: 2)]),
            DeviceJSON(schema: 1, device: "dev-b", events: 1, launches: 1,
                       firstEvent: "2013-11-10T09:00:00Z", lastEvent: "2013-11-10T09:00:00Z",
                       topApps: [.init(app: "b1", launches: 1)]),
        ])
    }

    @Test func countsEveryFileOfADevice() throws {
        let ws = try Workspace()
        try ws.write("t.csv", Self.trace)
        try ws.write("more.csv", "time,device,app,event\n2013-11-12T10:00:00Z,dev-b,b2,launch\n2013-11-12T11:00:00Z,dev-b,b2,launch\n")
        try #require(try ws.run(["ingest", "t.csv", "more.csv"]).status == 0)
        let devices = try ws.run(["devices", "--format", "json", "--top", "5"]).jsonLines(DeviceJSON.self)
        let b = try #require(devices.first { $0.device == "dev-b" })
        #expect(b.events == 3)
        #expect(b.lastEvent == "2013-11-12T11:00:00Z")
        #expect(b.topApps == [.init(app: "b2", launches: 2), .init(app: "b1", launches: 1)])
        // Apps never launched (a5 is only fetched) are not listed, however many are asked for.
        #expect(devices.first?.topApps.map(\.app) == ["a1", "a2", "a3", "a4"])
    }

    @Test func writesCSVWithOneColumnPairPerTopApp() throws {
        let ws = try Workspace()
        try ws.write("t.csv", Self.trace)
        try #require(try ws.run(["ingest", "t.csv"]).status == 0)
        let result = try ws.run(["devices", "--format", "csv", "--top", "2"])
        #expect(result.status == 0)
        #expect(result.out.split(separator: "\n").map(String.init) == [
            "device,events,launches,first_event,last_event,top_app_1,top_app_1_launches,top_app_2,top_app_2_launches",
            "dev-a,9,8,2013-11-09T08:00:00Z,2013-11-10T09:45:00Z,a1,3,a2,2",
            "dev-b,1,1,2013-11-10T09:00:00Z,2013-11-10T09:00:00Z,b1,1,,",
        ])
    }

    @Test func printsATable() throws {
        let ws = try Workspace()
        try ws.write("t.csv", Self.trace)
        try #require(try ws.run(["ingest", "t.csv"]).status == 0)
        let result = try ws.run(["devices"])
        #expect(result.status == 0)
        let lines = result.out.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines.first?.hasPrefix("device") == true)
        #expect(lines.dropFirst().first?.hasSuffix("a1 (3), a2 (2), a3 (2)") == true, "\(result.out)")
    }

    @Test func saysAnEmptyStoreHasNoDevicesOnStderrOnly() throws {
        let ws = try Workspace()
        try ws.write("t.csv", Self.trace)
        try #require(try ws.run(["ingest", "--db", "emptied.sqlite", "t.csv"]).status == 0)
        try #require(try ws.run(["forget", "--db", "emptied.sqlite", "t.csv"]).status == 0)
        let result = try ws.run(["devices", "--format", "json", "--db", "emptied.sqlite"])
        #expect(result.status == 0)
        #expect(result.out.isEmpty)
        #expect(result.err.contains("has no devices yet"), "\(result.err)")
    }

    @Test func pointsAnUnknownDeviceToTheDeviceList() throws {
        let ws = try Workspace()
        try ws.write("t.csv", Self.trace)
        try #require(try ws.run(["ingest", "t.csv"]).status == 0)
        for arguments in [["predict", "--device", "nope"], ["model", "--device", "nope"], ["export", "model", "--device", "nope"]] {
            let result = try ws.run(arguments)
            #expect(result.status == 1)
            #expect(result.err.contains("no device 'nope' in the store"), "\(result.err)")
            #expect(result.err.contains("`fetchcast devices`"), "\(arguments): \(result.err)")
        }
    }
}
