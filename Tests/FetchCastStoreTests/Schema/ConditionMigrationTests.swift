import FetchCastCore
import Testing
@testable import FetchCastStore
import FetchCastTrace
import FetchCastTestSupport

private let wide = "time,device,app,event,result,bytes,duration_ms,network,power,battery,low_power\n"

struct ConditionMigrationTests {
    /// A store as a v1 build left it: the v1 schema and one launch and one fetch.
    private func makeVersion1Store(_ temp: TemporaryStore) throws {
        let c = try Connection(path: temp.path, create: true)
        try c.execute("BEGIN")
        try c.execute(Schema.migrations[0])
        try c.execute("""
            INSERT INTO devices(id, name) VALUES (1, 'd1');
            INSERT INTO apps(id, name) VALUES (1, 'com.a');
            INSERT INTO files(id, name, sha256, format, gzip, size_bytes, rows, rejected, first_event_id, last_event_id, ingested_at)
                VALUES (1, 'old.csv', 'abc', 'csv', 0, 10, 2, 0, 1, 2, '2013-11-09T22:36:45Z');
            INSERT INTO event_log(id, file_id, line, time_us, utc_offset_s, device_id, app_id, kind, result, bytes, duration_ms)
                VALUES (1, 1, 2, 1384036605000000, 3600, 1, 1, 0, NULL, NULL, 11000),
                       (2, 1, 3, 1384036665000000, 3600, 1, 1, 1, 0, 512, NULL);
            PRAGMA user_version=1;
            COMMIT;
            """)
    }

    @Test func migratesAVersion1StoreForwardKeepingItsEvents() throws {
        let temp = try TemporaryStore()
        try makeVersion1Store(temp)
        let store = try temp.open()
        #expect(try store.connection.scalarInt("PRAGMA user_version") == Schema.currentVersion)
        #expect(try store.eventRows() == [
            "1384036605|3600|'d1'|com.a|launch|NULL|NULL|11000",
            "1384036665|3600|'d1'|com.a|fetch|'newData'|512|NULL",
        ])
        #expect(try store.rows("SELECT quote(network) || quote(power) || quote(battery) || quote(low_power) FROM events")
            == ["NULLNULLNULLNULL", "NULLNULLNULLNULL"])
        // The view's v1 columns come first, in their v1 order.
        #expect(Array(try store.rows("SELECT name FROM pragma_table_info('events') ORDER BY cid").prefix(11)) == [
            "time_utc", "utc_offset_s", "device", "app", "event", "result", "bytes", "duration_ms", "time_us", "file_id", "line",
        ])
        // New state rows go in next to the old events.
        let path = try temp.write("s.csv", wide + "2013-11-09T22:40:00Z,d1,,state,,,,wifi,charging,,on\n")
        try store.ingest(path)
        #expect(try store.rows("SELECT event || '|' || app || '|' || network || '|' || power || '|' || quote(battery) || '|' || low_power FROM events WHERE event = 'state'")
            == ["state||wifi|charging|NULL|on"])
    }

    @Test func storesEveryConditionAndReadsItBack() throws {
        let temp = try TemporaryStore()
        let store = try temp.open()
        let path = try temp.write("s.csv", wide + """
            2013-11-09T22:36:45Z,d1,com.a,launch,,,,,,,
            2013-11-09T22:37:00Z,d1,,state,,,,offline,battery,7,off
            2013-11-09T22:38:00Z,d1,,state,,,,cellular,,100,

            """)
        try store.ingest(path)
        #expect(try store.rows("SELECT event || '|' || quote(network) || '|' || quote(power) || '|' || quote(battery) || '|' || quote(low_power) FROM events ORDER BY time_us") == [
            "launch|NULL|NULL|NULL|NULL",
            "state|'offline'|'battery'|7|'off'",
            "state|'cellular'|NULL|100|NULL",
        ])
        var changes: [ConditionChange] = []
        try store.scanEvents { changes.append($0.conditions) }
        #expect(changes == [ConditionChange(), ConditionChange(network: .offline, power: .battery, battery: 7, lowPower: false), ConditionChange(network: .cellular, battery: 100)])
        let stats = try store.stats()
        #expect(stats.states == 2)
        #expect(stats.apps == 1)  // the state rows' empty app is not an app
        #expect(stats.launches == 1)
    }

    @Test func aDevicesHistoryIsReadInReplayOrderThroughItsIndex() throws {
        let temp = try TemporaryStore()
        let store = try temp.open()
        try store.ingest(try temp.write("s.csv", wide + """
            2013-11-09T22:36:45Z,d1,com.a,launch,,,,,,,
            2013-11-09T22:38:00+01:00,d1,,state,,,,wifi,,,
            2013-11-09T22:37:00Z,d2,,state,,,,offline,,,
            2013-11-09T22:37:00Z,d1,,state,,,,cellular,battery,,
            2013-11-09T22:37:00Z,d1,,state,,,,,charging,,

            """))
        let d1 = try #require(try store.deviceNames().first { $0.value == "d1" }?.key)
        func history(before micros: Int64) throws -> [StoredEvent] {
            var rows: [StoredEvent] = []
            try store.deviceHistory(ofDevice: d1, beforeMicros: micros) { rows.append($0) }
            return rows
        }
        let rows = try history(before: 1_384_036_620_000_001)
        // By time: the launch at 22:36:45Z, the 21:38Z (22:38+01:00) row, then the two 22:37:00Z
        // rows in file order; d2's is not d1's.
        #expect(rows.map(\.timeMicros) == [1_384_036_605_000_000, 1_384_033_080_000_000, 1_384_036_620_000_000, 1_384_036_620_000_000].sorted())
        #expect(rows.map(\.kind) == [.state, .launch, .state, .state])
        #expect(rows.filter { $0.kind == .state }.map(\.utcOffsetSeconds) == [3600, 0, 0])
        #expect(rows.filter { $0.kind == .state }.map(\.conditions) == [
            ConditionChange(network: .wifi), ConditionChange(network: .cellular, power: .battery), ConditionChange(power: .charging),
        ])
        #expect(try history(before: 1_384_036_620_000_000).count == 2, "strictly before")
        let explain = try store.connection.prepare("""
            EXPLAIN QUERY PLAN SELECT id FROM event_log WHERE (device_id = 1 OR device_id IS NULL) AND time_us >= 0 AND time_us < 1
            ORDER BY time_us, CASE kind WHEN 2 THEN 0 WHEN 3 THEN 1 ELSE 2 END, id
            """)
        var plan = ""
        while try explain.step() { plan += explain.text(3) + "\n" }  // id, parent, notused, detail
        #expect(plan.contains("event_log_device_time"), "\(plan)")
    }

    @Test func aBadStateRowLeavesTheStoreUnchanged() throws {
        let temp = try TemporaryStore()
        let store = try temp.open()
        try store.ingest(try temp.write("a.csv", header + "2013-11-09T22:36:45Z,d1,com.a,launch,,,\n"))
        let before = try store.dump()
        let bad = try temp.write("bad.csv", wide + "2013-11-09T22:37:00Z,d1,,state,,,,wifi,,,\n2013-11-09T22:38:00Z,d1,,state,,,,,,250,\n")
        let error = #expect(throws: TraceError.self) { try store.ingest(bad) }
        #expect(error?.description == "\(bad):3:37: invalid battery '250' (expected a whole percentage from 0 to 100 or nothing)")
        #expect(try store.dump() == before)
    }
}
