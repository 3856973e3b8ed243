import Foundation
import Testing
@testable import FetchCastStore
import FetchCastTrace
import FetchCastTestSupport

struct StoreStatsTests {
    static let zeros = StoreStats(
        files: 0, events: 0, devices: 0, apps: 0, launches: 0, fetches: 0, publishes: 0, rejected: 0,
        firstEvent: nil, lastEvent: nil, activeDeviceDays: 0, launchesPerDeviceDay: 0)

    @Test func reportsZerosForAnEmptyStore() throws {
        let temp = try TemporaryStore()
        let store = try temp.open()
        #expect(try store.stats() == Self.zeros)
    }

    /// A store that does not exist, opened without `create`, is an error naming the file (a
    /// mistyped path must not read as a store with nothing in it), and is not created.
    @Test func aStoreThatDoesNotExistIsAnErrorAndIsNotCreated() throws {
        let temp = try TemporaryStore()
        #expect {
            _ = try temp.open(create: false)
        } throws: { error in
            let error = try #require(error as? StoreError)
            return error.path == temp.path && error.message.hasPrefix("no such store")
        }
        #expect(!FileManager.default.fileExists(atPath: temp.path))
    }

    @Test func countsKindsDevicesAppsAndLocalDeviceDays() throws {
        let temp = try TemporaryStore()
        // dev-1 launches at 23:30 and 00:30 local time (+01:00): two local days, one UTC day.
        let a = try temp.write("a.csv", header + """
            2013-11-09T23:30:00+01:00,dev-1,com.a,launch,,,
            2013-11-10T00:30:00+01:00,dev-1,com.a,launch,,,
            2013-11-09T10:00:00Z,dev-2,com.b,launch,,,
            2013-11-09T11:00:00Z,dev-2,com.b,fetch,noData,,
            2013-11-09T09:00:00Z,,com.c,publish,,,

            """)
        // A second file: dev-2 again on the same day (counted once), and a new day.
        let b = try temp.write("b.csv", header + """
            2013-11-09T12:00:00Z,dev-2,com.b,launch,,,
            2013-11-11T12:00:00.5Z,dev-2,com.b,launch,,,
            2013-11-11T13:00:00Z,dev-2,com.a,fetch,failed,,

            """)
        let store = try temp.open()
        try store.ingest(a)
        try store.ingest(b)
        let stats = try store.stats()
        #expect(stats == StoreStats(
            files: 2, events: 8, devices: 2, apps: 3, launches: 5, fetches: 2, publishes: 1, rejected: 0,
            firstEvent: "2013-11-09T09:00:00Z", lastEvent: "2013-11-11T13:00:00Z",
            activeDeviceDays: 4, launchesPerDeviceDay: 5.0 / 4.0))
    }

    @Test func encodesJSONWithSnakeCaseKeysAndASchema() throws {
        let data = try JSONEncoder().encode(Self.zeros)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(Set(object.keys) == [
            "schema", "files", "events", "devices", "apps", "launches", "fetches", "publishes", "rejected",
            "active_device_days", "launches_per_device_day",
        ])
        #expect(object["schema"] as? Int == 1)
    }
}
