import FetchCastCore
import Testing
@testable import FetchCastStore
import FetchCastTrace
import FetchCastTestSupport

struct TimeOrderedScanTests {
    /// Everything an event source over a store scan handed out.
    struct Read {
        /// `file|device|app|time_us` per event, in the order handed out (`*` for every device).
        var events: [String] = []
        /// The file of each batch.
        var batchFiles: [String?] = []
        var names: [String] = []
    }

    /// Reads a store's time-ordered scan through an ``EventSource``, as the replay does.
    static func read(_ store: Store, devices: DeviceIDs? = nil, batchSize: Int = 8192) throws -> Read {
        let symbols = SymbolTable()
        let scan = try store.timeOrderedScan(symbols: symbols, devices: devices)
        var read = Read(names: symbols.allNames)
        let source = EventSource(scan, batchSize: batchSize, capacity: 2)
        _ = try source.forEachBatch { batch in
            #expect(batch.newNames.isEmpty)
            read.batchFiles.append(batch.file)
            for e in batch.events {
                let device = e.device == EncodedEvent.everyDevice ? "*" : read.names[Int(e.device)]
                read.events.append("\(batch.file ?? "?")|\(device)|\(read.names[Int(e.app)])|\(e.timeMicros)")
            }
        }
        return read
    }

    /// Two files whose events interleave in time, a publish to every device, and device ids
    /// holding quotes.
    static func interleaved(_ temp: TemporaryStore) throws -> (Store, a: String, b: String) {
        let a = try temp.write("a.csv", header + """
            2013-11-09T22:00:01Z,dev-1,com.a,launch,,,
            2013-11-09T22:00:03Z,"it's",com.a,launch,,,
            2013-11-09T22:00:05Z,dev-1,com.b,launch,,,

            """)
        let b = try temp.write("b.csv", header + #"""
            2013-11-09T22:00:02Z,"say ""hi""",com.a,launch,,,
            2013-11-09T22:00:03Z,,com.a,publish,,,
            2013-11-09T22:00:04Z,dev-1,com.a,fetch,newData,,

            """#)
        let store = try temp.open()
        try store.ingest(a)
        try store.ingest(b)
        return (store, a, b)
    }

    @Test func handsOutEveryEventInTimeOrderInBatchesOfOneFile() throws {
        let temp = try TemporaryStore()
        let (store, a, b) = try Self.interleaved(temp)
        let read = try Self.read(store)
        let t0: Int64 = 1_384_034_400_000_000
        #expect(read.events == [
            "\(a)|dev-1|com.a|\(t0 + 1_000_000)",
            "\(b)|say \"hi\"|com.a|\(t0 + 2_000_000)",
            "\(a)|it's|com.a|\(t0 + 3_000_000)",  // same instant: inserted first
            "\(b)|*|com.a|\(t0 + 3_000_000)",
            "\(b)|dev-1|com.a|\(t0 + 4_000_000)",
            "\(a)|dev-1|com.b|\(t0 + 5_000_000)",
        ])
        #expect(read.batchFiles == [a, b, a, b, a])
        #expect(Set(read.names) == ["dev-1", "it's", "say \"hi\"", "com.a", "com.b"])
    }

    @Test func batchesHoldAtMostTheBatchSize() throws {
        let temp = try TemporaryStore()
        let path = try temp.write("a.csv", header + (0..<10).map { "2013-11-09T22:00:0\($0)Z,dev-1,com.a,launch,,,\n" }.joined())
        let store = try temp.open()
        try store.ingest(path)
        let read = try Self.read(store, batchSize: 4)
        #expect(read.events.count == 10)
        #expect(read.batchFiles.count == 3)
    }

    @Test func deviceFilterIsAppliedByTheQuery() throws {
        let temp = try TemporaryStore()
        let (store, a, b) = try Self.interleaved(temp)
        let all = try Self.read(store)
        let read = try Self.read(store, devices: ["say \"hi\"", "it's", "not stored"])
        #expect(read.events == [
            "\(b)|say \"hi\"|com.a|1384034402000000",
            "\(a)|it's|com.a|1384034403000000",
            "\(b)|*|com.a|1384034403000000",
        ])
        // Every name is interned either way: the symbols do not depend on the filter.
        #expect(read.names == all.names)
        // No device at all: only the publishes to every device.
        #expect(try Self.read(store, devices: []).events == ["\(b)|*|com.a|1384034403000000"])
    }

    @Test func manyDevicesAreBoundAsOneParameter() throws {
        let temp = try TemporaryStore()
        // More devices than SQLite's default limit of bound variables in older builds (999).
        let rows = (0..<1_500).map { "2013-11-09T22:00:00Z,d\($0),com.a,launch,,,\n" }.joined()
        let path = try temp.write("a.csv", header + rows)
        let store = try temp.open()
        try store.ingest(path)
        let wanted = Set((0..<1_500).filter { $0 % 3 == 0 }.map { "d\($0)" })
        let read = try Self.read(store, devices: DeviceIDs(wanted))
        #expect(read.events.count == 500)
        #expect(Set(read.events.map { $0.split(separator: "|")[1] }.map(String.init)) == wanted)
    }

    @Test func theSnapshotEndsWithTheSource() throws {
        let temp = try TemporaryStore()
        let (store, _, _) = try Self.interleaved(temp)
        _ = try Self.read(store)
        #expect(!store.connection.inTransaction)
        // A source stopped early ends it too.
        let source = EventSource(try store.timeOrderedScan(symbols: SymbolTable()), batchSize: 1, capacity: 1)
        guard case .batch = source.next() else { Issue.record("expected a batch"); return }
        source.cancel()
        #expect(!store.connection.inTransaction)
    }

    @Test func anUnknownKindArrivesAsTheFailureNamingTheRow() throws {
        let temp = try TemporaryStore()
        let (store, _, _) = try Self.interleaved(temp)
        try store.connection.execute("UPDATE event_log SET kind = 9 WHERE id = 4")
        let error = #expect(throws: StoreError.self) { try Self.read(store) }
        #expect(error?.message.contains("event_log row 4 has kind 9") == true)
        #expect(!store.connection.inTransaction)
    }
}
