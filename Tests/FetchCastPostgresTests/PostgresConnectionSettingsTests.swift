import FetchCastPostgres
import FetchCastStore
import FetchCastTestSupport
import Foundation
import Testing

/// libpq's connection conventions against scripts/postgres.sh's cluster (issue 40 item 6).
@Suite(.enabled(if: PostgresTestDatabase.adminURL != nil, Comment(rawValue: PostgresTestDatabase.skipReason)))
struct PostgresConnectionSettingsTests {
    /// What the server sees of the sessions on the test database but the one asking:
    /// `application_name:client` (`socket` for a Unix-domain socket).
    private func sessions(_ database: PostgresTestDatabase) async throws -> [String] {
        try await database.strings(
            "SELECT application_name || ':' || coalesce(host(client_addr), 'socket') FROM pg_stat_activity "
                + "WHERE datname = current_database() AND pid <> pg_backend_pid()")
    }

    @Test func applicationNameIsFetchcastByDefault() async throws {
        let database = try await PostgresTestDatabase.create()
        let log = try await PostgresEventLog.open(try PostgresLocation(url: database.url), create: true)
        #expect(Set(try await sessions(database)) == ["fetchcast:127.0.0.1"])
        await log.close()
        await database.drop()
    }

    /// `host=DIR` connects through the server's socket `DIR/.s.PGSQL.PORT`.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["FETCHCAST_TEST_POSTGRES_DIR"] != nil))
    func aUnixSocketAndAnApplicationName() async throws {
        let directory = try #require(ProcessInfo.processInfo.environment["FETCHCAST_TEST_POSTGRES_DIR"])
        let database = try await PostgresTestDatabase.create()
        let url = "postgres://\(database.location.user)@:\(database.location.port)/\(database.location.database)?host=\(directory)&application_name=socket-test"
        let log = try await PostgresEventLog.open(try PostgresLocation(url: url), create: true)
        #expect(Set(try await sessions(database)) == ["socket-test:socket"])
        await log.close()
        await database.drop()
    }

    @Test func noPasswordIsASentenceWithTheFix() async throws {
        let database = try await PostgresTestDatabase.create()
        var location = database.location
        location.password = nil
        await #expect {
            _ = try await PostgresEventLog.open(location, create: true)
        } throws: { error in
            let text = String(describing: error)
            return text.contains("the server asks for a password and none was given; set PGPASSWORD") && !text.contains("authMechanism")
        }
        await database.drop()
    }
}
