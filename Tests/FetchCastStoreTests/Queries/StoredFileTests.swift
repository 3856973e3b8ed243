import Foundation
import Testing
@testable import FetchCastStore
import FetchCastTrace
import FetchCastTestSupport

struct StoredFileTests {
    /// A store holding two files, with their paths; the directory lives as long as this value.
    final class TwoFiles {
        let temp: TemporaryStore
        let store: Store
        let a: String
        let b: String

        init() throws {
            temp = try TemporaryStore()
            a = try temp.write("a.csv", header + "2013-11-09T22:36:45Z,dev-1,com.a,launch,,,\n2013-11-09T22:36:46Z,dev-1,com.a,launch,,,\n")
            b = try temp.write("b.csv", header + "2013-11-10T22:36:45Z,dev-2,com.b,fetch,newData,,\n")
            store = try temp.open()
            try store.ingest(a)
            try store.ingest(b)
        }
    }

    @Test func listsFilesOldestFirst() throws {
        let fixture = try TwoFiles()
        let (store, a, b) = (fixture.store, fixture.a, fixture.b)
        let files = try store.files()
        #expect(files.map(\.name) == [a, b])
        #expect(files.map(\.rows) == [2, 1])
        #expect(files.map(\.sha256.count) == [64, 64])
    }

    @Test(arguments: ["name", "hash", "uppercase hash", "prefix"])
    func forgetsOneFile(by key: String) throws {
        let fixture = try TwoFiles()
        let (store, a, b) = (fixture.store, fixture.a, fixture.b)
        let bRows = try store.eventRows().filter { $0.contains("dev-2") }
        let file = try #require(try store.files().first { $0.name == a })
        let argument = switch key {
        case "name": a
        case "hash": file.sha256
        case "uppercase hash": file.sha256.uppercased()
        default: String(file.sha256.prefix(8))
        }
        let removed = try store.forget(argument)
        #expect(removed == file)
        #expect(try store.files().map(\.name) == [b])
        #expect(try store.eventRows() == bRows)
        let stats = try store.stats()
        #expect(stats.events == 1)
        #expect(stats.launches == 0)
        #expect(stats.devices == 1)
        #expect(stats.activeDeviceDays == 0)
        #expect(try store.connection.scalarInt("SELECT count(*) FROM file_counts WHERE file_id = ?", [.integer(file.id)]) == 0)
        #expect(try store.connection.scalarInt("SELECT count(*) FROM file_days WHERE file_id = ?", [.integer(file.id)]) == 0)
    }

    @Test func ingestsAFileAgainAfterForgettingIt() throws {
        let fixture = try TwoFiles()
        let (store, a) = (fixture.store, fixture.a)
        let before = try store.eventRows()
        _ = try store.forget(a)
        let result = try store.ingest(a)
        #expect(result.status == .ingested)
        #expect(try store.eventRows() == before)
    }

    @Test func dropsPersistedModelStateOnForget() async throws {
        let fixture = try TwoFiles()
        let (store, a) = (fixture.store, fixture.a)
        try store.connection.execute("INSERT INTO model_state(key, watermark, state) VALUES ('m', 1, x'00')")
        _ = try store.forget(a)
        // All but the forget's mark (ForgetMark): 8 random bytes, the last event's number.
        #expect(try store.connection.scalarInt("SELECT count(*) FROM model_state") == 1)
        let mark = try await #require(try store.modelState(key: ForgetMark.key))
        let last = try store.lastEventID()
        #expect(mark.state.count == 8 && mark.watermark == last)
    }

    @Test(arguments: ["nothing.csv", "0123456789abcdef", "abc"])
    func refusesToForgetWhatItDoesNotHold(argument: String) throws {
        let fixture = try TwoFiles()
        let store = fixture.store
        let before = try store.dump()
        let error = #expect(throws: StoreError.self) { try store.forget(argument) }
        #expect(error?.message.contains("no ingested file is named or hashed '\(argument)'") == true)
        #expect(try store.dump() == before)
    }

    @Test func refusesAShortHashPrefix() throws {
        let fixture = try TwoFiles()
        let store = fixture.store
        let prefix = String(try store.files()[0].sha256.prefix(7))
        #expect(throws: StoreError.self) { try store.forget(prefix) }
        #expect(try store.files().count == 2)
    }

    @Test func refusesANameThatMatchesTwoFiles() throws {
        let temp = try TemporaryStore()
        let store = try temp.open()
        let path = try temp.write("daily.csv", header + "2013-11-09T22:36:45Z,dev-1,com.a,launch,,,\n")
        try store.ingest(path)
        try temp.write("daily.csv", header + "2013-11-10T22:36:45Z,dev-1,com.a,launch,,,\n")
        try store.ingest(path)
        let before = try store.dump()
        let error = #expect(throws: StoreError.self) { try store.forget(path) }
        #expect(error?.message.contains("matches 2 files") == true)
        #expect(try store.dump() == before)
        // The full hash still picks one.
        _ = try store.forget(try store.files()[1].sha256)
        #expect(try store.files().count == 1)
    }
}

struct UnknownStoredValueTests {
    /// A kind, result, device or app id this build does not know is an error naming the row,
    /// never a silent launch or symbol 0.
    @Test(arguments: [
        ("UPDATE event_log SET kind = 9 WHERE id = 2", "event_log row 2 has kind 9"),
        ("UPDATE event_log SET result = 7 WHERE id = 1", "event_log row 1 has result 7"),
        ("UPDATE event_log SET network = 5 WHERE id = 2", "event_log row 2 has network 5"),
        ("UPDATE event_log SET power = 3 WHERE id = 1", "event_log row 1 has power 3"),
        ("UPDATE event_log SET battery = 101 WHERE id = 2", "event_log row 2 has battery 101"),
        ("UPDATE event_log SET low_power = 2 WHERE id = 2", "event_log row 2 has low_power 2"),
    ])
    func anUnknownValueIsAnErrorNamingTheRow(damage: String, message: String) throws {
        let temp = try TemporaryStore()
        let store = try temp.open()
        let dir = try TemporaryDirectory()
        let trace = try dir.write(
            "t.csv", header + "2013-11-09T22:36:45Z,d1,com.a,fetch,newData,10,\n2013-11-09T22:37:45Z,d1,com.a,launch,,,\n")
        try store.ingest(trace)
        var seen = 0
        try store.scanEvents { _ in seen += 1 }
        #expect(seen == 2)
        try store.connection.execute(damage)
        let error = #expect(throws: StoreError.self) { try store.scanEvents { _ in } }
        #expect(error?.description.contains(message) == true, "\(String(describing: error))")
        // A device's history (what plans are made from) reads through the same check.
        let history = #expect(throws: StoreError.self) { try store.deviceHistory(ofDevice: 1, beforeMicros: .max) { _ in } }
        #expect(history?.description.contains(message) == true, "\(String(describing: history))")
    }
}
