import Testing
@testable import FetchCastStore
import FetchCastTestSupport

/// Events go in many rows per statement; what is stored must be what one insert per row stores.
struct EventLogInserterTests {
    /// `count` rows in file order: a `state` row every `stateEvery` rows, the rest launches and
    /// fetches of two devices, from `hour`:00 UTC; line `k + 2` holds row `k`.
    private static func trace(count: Int, stateEvery: Int, hour: Int = 22) -> String {
        var text = "time,device,app,event,result,bytes,duration_ms,network,power,battery,low_power\n"
        for k in 0..<count {
            let minute = k / 60 % 60, second = k % 60
            let time = "2013-11-09T\(hour):\(minute < 10 ? "0" : "")\(minute):\(second < 10 ? "0" : "")\(second)Z"
            let device = "dev-\(k % 2)"
            if k % stateEvery == 3 {
                text += "\(time),\(device),,state,,,,wifi,charging,\(k % 101),on\n"
            } else if k % 5 == 0 {
                text += "\(time),\(device),app-\(k % 3),fetch,newData,\(k),\(k % 7),,,,\n"
            } else {
                text += "\(time),\(device),app-\(k % 3),launch,,,\(k),,,,\n"
            }
        }
        return text
    }

    @Test(arguments: [1, 63, 64, 65, 2 * EventLogInserter.rowsPerStatement + 5])
    func storesEveryRowInFileOrderWithConsecutiveIDs(count: Int) throws {
        let temp = try TemporaryStore()
        let store = try temp.open()
        // A first file, so that the second goes in through the history index too.
        let first = try store.ingest(try temp.write("first.csv", Self.trace(count: 70, stateEvery: 9)))
        #expect(first.events == 70)
        // An hour later: none of its events is already stored (those would be skipped).
        let path = try temp.write("second.csv", Self.trace(count: count, stateEvery: 29, hour: 23))
        let result = try store.ingest(path)
        #expect(result.events == Int64(count))
        let span = try store.rows("SELECT first_event_id || '-' || last_event_id FROM files WHERE id = 2")
        #expect(span == ["71-\(70 + count)"])
        let lines = try store.rows("SELECT line FROM event_log WHERE file_id = 2 ORDER BY id").map { Int($0)! }
        #expect(lines == Array(2...(count + 1)))
        let ids = try store.rows("SELECT id FROM event_log WHERE file_id = 2 ORDER BY id").map { Int($0)! }
        #expect(ids == Array(71...(70 + count)))
        // A state row has its conditions and no result, bytes or duration; every other row the opposite.
        let states = try store.rows("""
            SELECT count(*) FROM event_log WHERE file_id = 2 AND kind = 3
              AND network = 0 AND power = 0 AND battery = (line - 2) % 101 AND low_power = 1
              AND result IS NULL AND bytes IS NULL AND duration_ms IS NULL
            """)
        let expectedStates = (0..<count).filter { $0 % 29 == 3 }.count
        #expect(states == [String(expectedStates)])
        let others = try store.rows("""
            SELECT count(*) FROM event_log WHERE file_id = 2 AND kind <> 3
              AND network IS NULL AND power IS NULL AND battery IS NULL AND low_power IS NULL
              AND duration_ms = CASE kind WHEN 1 THEN (line - 2) % 7 ELSE line - 2 END
              AND (kind = 0 OR bytes = line - 2)
            """)
        #expect(others == [String(count - expectedStates)])
    }
}
