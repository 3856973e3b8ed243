import Testing
@testable import FetchCastStore
import FetchCastTestSupport

struct DeviceListingTests {
    /// Three files over five devices (one of them only in a forgotten file), ids in an order
    /// unlike their names' byte order.
    private func store() throws -> (TemporaryStore, Store) {
        let temp = try TemporaryStore()
        let a = try temp.write("a.csv", header + """
            2013-11-09T08:00:00Z,zz,com.a,launch,,,
            2013-11-09T08:01:00Z,b,com.b,fetch,newData,,
            2013-11-09T08:02:00Z,,com.a,publish,,,
            2013-11-09T08:03:00Z,É,com.a,launch,,,

            """)
        let b = try temp.write("b.csv", header + """
            2013-11-10T08:00:00Z,b,com.b,launch,,,
            2013-11-10T09:00:00Z,a,com.a,launch,,,
            2013-11-10T09:30:00Z,zz,com.a,launch,,,

            """)
        let c = try temp.write("c.csv", header + """
            2013-11-11T08:00:00Z,gone,com.a,launch,,,

            """)
        let store = try temp.open()
        for file in [a, b, c] { _ = try store.ingest(file) }
        _ = try store.forget(c)
        return (temp, store)
    }

    @Test func pagesWalkTheDevicesInByteOrderWithTheirSums() throws {
        let (_, store) = try store()
        let all = try store.deviceSummaries(after: nil, limit: 100)
        #expect(all.map(\.device) == ["a", "b", "zz", "É"], "bytewise order; a forgotten file's only device is gone")
        #expect(all.map(\.events) == [1, 2, 2, 1])
        let zz = try #require(all.first { $0.device == "zz" })
        #expect(zz.firstMicros == 1_383_984_000_000_000 && zz.lastMicros == 1_384_075_800_000_000, "first and last over both files")
        // Pages of two, each after the last of the one before, give the same list.
        var pages: [[String]] = []
        var after: String?
        while true {
            let page = try store.deviceSummaries(after: after, limit: 2)
            if page.isEmpty { break }
            pages.append(page.map(\.device))
            after = page.last?.device
        }
        #expect(pages == [["a", "b"], ["zz", "É"]])
        #expect(try store.deviceSummaries(after: "b", limit: 1).map(\.device) == ["zz"], "strictly after")
        #expect(try store.deviceSummaries(after: "c", limit: 10).map(\.device) == ["zz", "É"], "after an id not in the store")
        #expect(try store.deviceSummaries(after: nil, limit: 0).isEmpty)
    }

    @Test func aPageReadsOnlyItsDevicesAggregates() throws {
        let (_, store) = try store()
        for sql in [Store.firstDevicePage, Store.devicePageAfter] {
            var plan: [String] = []
            let explain = try store.connection.prepare("EXPLAIN QUERY PLAN " + sql)
            while try explain.step() { plan.append(explain.text(3)) }
            #expect(plan.contains { $0.contains("file_counts_device") }, "\(plan)")
            #expect(!plan.contains { $0.hasPrefix("SCAN c") }, "no scan of every file's counts: \(plan)")
        }
    }
}
