@testable import FetchCastServe
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The spool directories of servers on a database (one each, in `$TMPDIR`): a start removes
/// those whose server is gone, with the bodies they held, and nothing else.
struct PrivateSpoolDirectoryTests {
    private func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    @Test func aStartRemovesTheDirectoriesOfServersThatAreGoneAndOnlyThose() throws {
        let fixture = try ServeFixture()
        let base = fixture.directory
        // A running server's (this process holds its lock) with a body in it.
        let running = try PrivateSpoolDirectory.create(in: base)
        #expect(running.path.hasPrefix(base + "/fetchcast-spool-"))
        let runningBody = try BodySpool(directory: running.path, store: "postgres://db")
        // A killed server's: its lock file and a body, the lock held by no one.
        let killed = base + "/fetchcast-spool-k1lled"
        try FileManager.default.createDirectory(atPath: killed, withIntermediateDirectories: false)
        _ = FileManager.default.createFile(atPath: killed + "/owner.lock", contents: Data())
        _ = FileManager.default.createFile(atPath: killed + "/db-body-abc123", contents: Data(repeating: 1, count: 4096))
        // Made otherwise (no lock file: an older server's, or not a server's), and a file of that name.
        let unmarked = base + "/fetchcast-spool-0ther1"
        try FileManager.default.createDirectory(atPath: unmarked, withIntermediateDirectories: false)
        _ = FileManager.default.createFile(atPath: unmarked + "/notes", contents: Data())
        _ = FileManager.default.createFile(atPath: base + "/fetchcast-spool-f1le00", contents: Data())

        #expect(PrivateSpoolDirectory.removeAbandoned(in: base) == 1)
        #expect(!exists(killed))
        #expect(exists(running.path + "/owner.lock") && exists(runningBody.path))
        #expect(exists(unmarked + "/notes") && exists(base + "/fetchcast-spool-f1le00"))

        // A graceful stop removes its own; then nothing is left to remove.
        runningBody.remove()
        running.remove()
        #expect(!exists(running.path))
        #expect(PrivateSpoolDirectory.removeAbandoned(in: base) == 0)
    }

    /// A server that ends without its graceful stop (its lock released with the process: here,
    /// ``PrivateSpoolDirectory/abandon()``) leaves a directory the next start removes.
    @Test func aDirectoryWhoseOwnerEndedWithoutStoppingIsRemovedAtTheNextStart() throws {
        let fixture = try ServeFixture()
        var path = ""
        do {
            let owner = try PrivateSpoolDirectory.create(in: fixture.directory)
            path = owner.path
            _ = FileManager.default.createFile(atPath: path + "/db-body-zzzzzz", contents: Data())
            #expect(PrivateSpoolDirectory.removeAbandoned(in: fixture.directory) == 0, "its owner runs")
            owner.abandon()
        }
        #expect(exists(path + "/db-body-zzzzzz"))
        #expect(PrivateSpoolDirectory.removeAbandoned(in: fixture.directory) == 1)
        #expect(!exists(path))
    }
}
