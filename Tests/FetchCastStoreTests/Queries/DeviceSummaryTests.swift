import Foundation
import Testing
@testable import FetchCastStore
import FetchCastTrace
import FetchCastTestSupport

struct DeviceSummaryTests {
    @Test func listsNothingForAnEmptyStore() throws {
        let temp = try TemporaryStore()
        #expect(try temp.open().devices().isEmpty)
        #expect(try temp.open(create: false).devices().isEmpty)
    }

    @Test func sumsFilesAndForgetsWithThem() throws {
        let temp = try TemporaryStore()
        let a = try temp.write("a.csv", header + """
            2013-11-09T08:00:00Z,dev-1,com.a,launch,,,
            2013-11-09T08:01:00Z,dev-1,com.b,fetch,newData,,
            2013-11-09T08:02:00Z,,com.a,publish,,,

            """)
        let b = try temp.write("b.csv", header + """
            2013-11-10T08:00:00Z,dev-1,com.b,launch,,,
            2013-11-10T08:01:00Z,dev-1,com.b,launch,,,
            2013-11-10T09:00:00Z,dev-2,com.a,launch,,,

            """)
        let store = try temp.open()
        _ = try store.ingest(a)
        _ = try store.ingest(b)
        #expect(try store.devices() == [
            DeviceSummary(device: "dev-1", events: 4, launches: 3, firstEvent: "2013-11-09T08:00:00Z", lastEvent: "2013-11-10T08:01:00Z",
                          topApps: [.init(app: "com.b", launches: 2), .init(app: "com.a", launches: 1)]),
            DeviceSummary(device: "dev-2", events: 1, launches: 1, firstEvent: "2013-11-10T09:00:00Z", lastEvent: "2013-11-10T09:00:00Z",
                          topApps: [.init(app: "com.a", launches: 1)]),
        ])
        #expect(try store.devices(top: 1).first?.topApps.map(\.app) == ["com.b"])
        #expect(try store.devices(top: 0).map(\.topApps) == [[], []])
        _ = try store.forget(b)
        #expect(try store.devices().map(\.device) == ["dev-1"])
        #expect(try store.devices().first?.events == 2)
    }
}
