import Foundation
import Testing
@testable import FetchCastStore
import FetchCastTrace
import FetchCastTestSupport

struct StoreTests {
    @Test func recordsTheSchemaVersionAndUsesWAL() throws {
        let temp = try TemporaryStore()
        let store = try temp.open()
        #expect(try store.connection.scalarInt("PRAGMA user_version") == Schema.currentVersion)
        #expect(Schema.currentVersion == Int64(Schema.migrations.count))
        #expect(try store.rows("PRAGMA journal_mode") == ["wal"])
        #expect(try store.rows("SELECT name FROM sqlite_master WHERE type = 'view'") == ["events"])
    }

    @Test func opensAnExistingStoreWithoutMigratingAgain() throws {
        let temp = try TemporaryStore()
        let path = try temp.write("a.csv", header + "2013-11-09T22:36:45Z,dev-1,com.a,launch,,,\n")
        try temp.open().ingest(path)
        let reopened = try temp.open()
        #expect(try reopened.connection.scalarInt("PRAGMA user_version") == Schema.currentVersion)
        #expect(try reopened.stats().events == 1)
    }

    @Test func refusesASQLiteDatabaseThatIsNotAStoreAndLeavesItAlone() throws {
        let temp = try TemporaryStore()
        do {
            let other = try Connection(path: temp.path, create: true)
            try other.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes(body) VALUES ('keep me');")
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: temp.path))
        let error = #expect(throws: StoreError.self) { try temp.open() }
        #expect(error?.message.contains("not a FetchCast store") == true, "\(String(describing: error))")
        #expect(try Data(contentsOf: URL(fileURLWithPath: temp.path)) == before)
        #expect(!FileManager.default.fileExists(atPath: temp.path + "-wal"))
        // Readers refuse it too.
        #expect(throws: StoreError.self) { try temp.open(create: false) }
    }

    @Test func refusesAFileThatIsNotSQLite() throws {
        let temp = try TemporaryStore()
        let text = Array("time,device,app,event\n".utf8) + [UInt8](repeating: 0x41, count: 200)
        try temp.write("test.sqlite", bytes: text)
        let error = #expect(throws: StoreError.self) { try temp.open() }
        #expect(error?.message.contains("not an SQLite database") == true, "\(String(describing: error))")
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: temp.path))) == text)
    }

    @Test func refusesAStoreFromANewerFetchCast() throws {
        let temp = try TemporaryStore()
        do {
            let store = try temp.open()
            try store.connection.execute("PRAGMA user_version = \(Schema.currentVersion + 1)")
        }
        let error = #expect(throws: StoreError.self) { try temp.open() }
        #expect(error?.message.contains("newer than this fetchcast") == true)
    }

    /// A store that says it is version 3 but lacks what version 3 has (an index dropped by hand):
    /// the upgrade cannot run. The error names the version and what to do, not "no such index",
    /// and the store is left as it was.
    @Test func refusesAnOlderStoreThatCannotBeUpgradedNamingItsVersion() throws {
        let temp = try TemporaryStore()
        do {
            let store = try temp.open()
            try store.connection.execute("DROP INDEX file_counts_device; DROP INDEX event_log_device_time; PRAGMA user_version = 3")
        }
        let error = #expect(throws: StoreError.self) { try temp.open() }
        let message = error?.message ?? ""
        #expect(message.contains("schema version 3, older than this fetchcast's \(Schema.currentVersion)"), "\(message)")
        #expect(message.contains("cannot be upgraded") && message.contains("new store"), "\(message)")
        let reopened = try Connection(path: temp.path, create: false)
        #expect(try reopened.scalarInt("PRAGMA user_version") == 3)
    }
}
