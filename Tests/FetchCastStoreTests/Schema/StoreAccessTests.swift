import Foundation
import Testing
@testable import FetchCastStore
import FetchCastTestSupport

struct StoreAccessTests {
    typealias Mode = Store.OpenMode

    @Test(arguments: [
        // access, file writable, folder writable, WAL in use → read-only, immutable
        (Store.Access.read, true, true, false, true, false),
        (.read, false, true, false, true, false),
        (.read, false, false, false, true, true),
        (.read, true, false, false, true, true),
        (.read, false, false, true, true, false),  // immutable would miss the WAL's changes
        (.readSavingWhenWritable, true, true, false, false, false),
        (.readSavingWhenWritable, true, true, true, false, false),
        (.readSavingWhenWritable, false, true, false, true, false),
        (.readSavingWhenWritable, true, false, false, true, true),
        (.readSavingWhenWritable, false, false, false, true, true),
    ])
    func opensReadOnlyWhenItOnlyReadsOrCannotWrite(
        access: Store.Access, fileWritable: Bool, folderWritable: Bool, walInUse: Bool, readOnly: Bool, immutable: Bool
    ) {
        let mode = Mode.decide(access: access, fileWritable: fileWritable, folderWritable: folderWritable, walInUse: walInUse)
        #expect(mode == Mode(readOnly: readOnly, immutable: immutable))
    }

    @Test func aReaderReadsAndCannotWrite() throws {
        let temp = try TemporaryStore()
        do {
            let writer = try temp.open()
            try temp.ingest(["2013-11-09T22:36:45Z,dev-1,com.a,launch,,,"], into: writer)
        }
        let reader = try Store(path: temp.path, access: .read)
        #expect(reader.isReadOnly)
        #expect(try reader.stats().events == 1)
        let error = #expect(throws: StoreError.self) { try reader.writeTransaction { try reader.connection.execute("DELETE FROM model_state") } }
        #expect(error?.isReadOnly == true, "\(String(describing: error))")
        #expect(error?.isWriteFailure == true)
        let saver = try Store(path: temp.path, access: .readSavingWhenWritable)
        #expect(!saver.isReadOnly)
    }

    @Test func anImmutableReaderNeedsNoSharedMemoryFile() throws {
        let temp = try TemporaryStore()
        do {
            let writer = try temp.open()
            try temp.ingest(["2013-11-09T22:36:45Z,dev-1,com.a,launch,,,"], into: writer)
        }
        // The writer closed: its WAL was checkpointed and removed.
        #expect(!FileManager.default.fileExists(atPath: temp.path + "-wal"))
        let connection = try Connection(path: temp.path, create: false, readOnly: true, immutable: true)
        #expect(try connection.scalarInt("SELECT count(*) FROM events") == 1)
        #expect(!FileManager.default.fileExists(atPath: temp.path + "-shm"))
    }

    @Test func aStoreThatDoesNotExistIsNotReadAsEmpty() throws {
        let temp = try TemporaryStore()
        let error = #expect(throws: StoreError.self) { try Store(path: temp.path, access: .read) }
        #expect(error?.message.contains("does not exist") == true)
        #expect(!FileManager.default.fileExists(atPath: temp.path))
    }

    @Test func aPathWithURICharactersOpensImmutable() throws {
        let temp = try TemporaryStore()
        let odd = temp.directory + "/a?b#c%d.sqlite"
        do { _ = try Store(path: odd, create: true) }
        let connection = try Connection(path: odd, create: false, readOnly: true, immutable: true)
        #expect(try connection.scalarInt("PRAGMA user_version") == Schema.currentVersion)
    }
}
