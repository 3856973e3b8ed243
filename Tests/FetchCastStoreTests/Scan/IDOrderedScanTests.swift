import Testing
@testable import FetchCastStore
import FetchCastTrace
import FetchCastTestSupport

struct IDOrderedScanTests {
    /// Events through an ``EventSource`` over the id-ordered scan, as `id|device|app|kind`.
    static func read(_ store: Store, afterID: Int64 = 0, devices: ClosedRange<Int64>? = nil, batchSize: Int = 2) throws -> [String] {
        var out: [String] = []
        let source = EventSource(try store.idOrderedScan(afterID: afterID, devices: devices), batchSize: batchSize, capacity: 1)
        _ = try source.forEachBatch { batch in
            #expect(batch.events.count <= batchSize)
            for e in batch.events { out.append("\(e.line)|\(e.device)|\(e.app)|\(e.kind)") }
        }
        return out
    }

    @Test func handsOutEventsAfterAnIDInIDOrderWithStoreIDs() throws {
        let temp = try TemporaryStore()
        let store = try temp.open()
        try store.ingest(try temp.write("a.csv", header + """
            2013-11-09T22:00:05Z,dev-1,com.a,launch,,,
            2013-11-09T22:00:01Z,dev-2,com.b,launch,,,
            2013-11-09T22:00:03Z,,com.a,publish,,,
            2013-11-09T22:00:04Z,dev-3,com.a,fetch,newData,,

            """))
        let devices = try store.deviceNames(), apps = try store.appNames()
        let id = { (name: String) in devices.first { $0.value == name }!.key }
        let app = { (name: String) in apps.first { $0.value == name }!.key }
        let all = [
            "1|\(id("dev-1"))|\(app("com.a"))|launch", "2|\(id("dev-2"))|\(app("com.b"))|launch",
            "3|-1|\(app("com.a"))|publish", "4|\(id("dev-3"))|\(app("com.a"))|fetch",
        ]
        #expect(try Self.read(store) == all)
        #expect(try Self.read(store, afterID: 2) == Array(all[2...]))
        // A device range keeps the publishes to every device.
        #expect(try Self.read(store, devices: id("dev-2")...id("dev-2")) == [all[1], all[2]])
        // The in-place reading gives the same events.
        var inPlace: [String] = []
        try store.scanEvents { e in inPlace.append("\(e.id)|\(e.device ?? -1)|\(e.app)|\(e.kind)") }
        #expect(inPlace == all)
    }
}
