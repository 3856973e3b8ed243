@testable import FetchCastServe
import Foundation
import Testing

struct BodySpoolTests {
    @Test func bodiesAreSpooledBesideTheStore() {
        #expect(ServeConfiguration(databasePath: "/srv/data/fetchcast.sqlite").spoolDirectory == "/srv/data")
        #expect(ServeConfiguration(databasePath: "fetchcast.sqlite").spoolDirectory == ".")
        #expect(ServeConfiguration(databasePath: "/fetchcast.sqlite").spoolDirectory == "/")
    }

    @Test func aStartRemovesTheSpoolsAKilledServerLeft() async throws {
        let fixture = try ServeFixture()
        let stale = try BodySpool(directory: fixture.directory, store: fixture.database)
        #expect(FileManager.default.fileExists(atPath: stale.path))
        #expect(stale.path.hasPrefix(fixture.directory + "/fetchcast.sqlite-body-"))
        // Another store's spool and an unrelated file in the same directory stay.
        let other = try BodySpool(directory: fixture.directory, store: fixture.directory + "/other.sqlite")
        let unrelated = fixture.directory + "/fetchcast.sqlite-body-notes.txt"
        _ = FileManager.default.createFile(atPath: unrelated, contents: Data())
        _ = try await buildApplication(configuration: try fixture.configuration())
        #expect(!FileManager.default.fileExists(atPath: stale.path))
        #expect(FileManager.default.fileExists(atPath: other.path))
        #expect(FileManager.default.fileExists(atPath: unrelated))
    }
}
