import Foundation
import Logging
import PostgresNIO
import FetchCastPostgres

/// A fresh PostgreSQL database for one test, on the server `$FETCHCAST_TEST_POSTGRES` names
/// (the test command's throwaway cluster, scripts/postgres.sh); dropped by ``drop()``.
package struct PostgresTestDatabase: Sendable {
    /// The URL of the server's maintenance database, when the tests were given one.
    package static var adminURL: String? {
        guard let url = ProcessInfo.processInfo.environment["FETCHCAST_TEST_POSTGRES"], !url.isEmpty else { return nil }
        return url
    }

    /// Why PostgreSQL cases are skipped, when they are.
    package static let skipReason = "FETCHCAST_TEST_POSTGRES is not set: PostgreSQL case skipped (scripts/test.sh starts a server and sets it)"

    /// The new database's URL (no password: it comes from the environment, as for the admin URL).
    package let url: String
    /// Its location, parsed.
    package let location: PostgresLocation
    private let name: String

    /// Creates a database named `fetchcast_test_<random>`.
    package static func create() async throws -> PostgresTestDatabase {
        guard let adminURL else { throw CocoaError(.featureUnsupported) }
        let admin = try PostgresLocation(url: adminURL)
        let name = "fetchcast_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        // A name this code made (letters, digits, underscores): the one identifier written into SQL.
        try await withAdmin(admin) { c, logger in
            try await c.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: logger)
        }
        var location = admin
        location.database = name
        let url = "postgres://\(admin.user)@\(admin.host):\(admin.port)/\(name)"
        return PostgresTestDatabase(url: url, location: location, name: name)
    }

    /// Drops the database (ending any connection still open to it).
    package func drop() async {
        guard let adminURL = Self.adminURL, let admin = try? PostgresLocation(url: adminURL) else { return }
        try? await Self.withAdmin(admin) { c, logger in
            try await c.query(PostgresQuery(unsafeSQL: "ALTER DATABASE \(name) ALLOW_CONNECTIONS true"), logger: logger)
            try await c.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"), logger: logger)
        }
    }

    /// Runs SQL on the test database itself (to inspect or damage it).
    package func execute(_ sql: String) async throws {
        try await Self.withAdmin(location) { c, logger in
            try await c.query(PostgresQuery(unsafeSQL: sql), logger: logger)
        }
    }

    /// Takes the database away from its clients as a restart does, or brings it back: with
    /// `false`, no new session is let in (`ALLOW_CONNECTIONS false`) and every session open on
    /// it is ended (`pg_terminate_backend`); with `true`, sessions are let in again.
    package func setReachable(_ reachable: Bool) async throws {
        guard let adminURL = Self.adminURL else { throw CocoaError(.featureUnsupported) }
        try await Self.withAdmin(try PostgresLocation(url: adminURL)) { c, logger in
            // A name this code made: the one identifier written into SQL.
            try await c.query(PostgresQuery(unsafeSQL: "ALTER DATABASE \(name) ALLOW_CONNECTIONS \(reachable)"), logger: logger)
            if !reachable {
                try await c.query(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = \(name) AND pid <> pg_backend_pid()",
                    logger: logger)
            }
        }
    }

    /// Holds `LOCK TABLE tables IN ACCESS EXCLUSIVE MODE` for `seconds` in a transaction of a
    /// session of its own (then rolled back); `locked` is called once the lock is held.
    /// - Parameter tables: Fixed names of the test's (written into SQL).
    package func holdingLock(on tables: [String], for seconds: Double, locked: @Sendable () -> Void) async throws {
        try await Self.withAdmin(location) { c, logger in
            try await c.query("BEGIN", logger: logger)
            try await c.query(PostgresQuery(unsafeSQL: "LOCK TABLE \(tables.joined(separator: ", ")) IN ACCESS EXCLUSIVE MODE"), logger: logger)
            locked()
            try await c.query("SELECT pg_sleep(\(seconds))", logger: logger)
            try await c.query("ROLLBACK", logger: logger)
        }
    }

    /// The first column of every row of `sql`, as text.
    package func strings(_ sql: String) async throws -> [String] {
        try await Self.withAdmin(location) { c, logger in
            var out: [String] = []
            for try await value in try await c.query(PostgresQuery(unsafeSQL: sql), logger: logger).decode(String.self) {
                out.append(value)
            }
            return out
        }
    }

    @discardableResult
    private static func withAdmin<T: Sendable>(
        _ location: PostgresLocation, _ body: (PostgresConnection, Logger) async throws -> T
    ) async throws -> T {
        let logger = Logger(label: "fetchcast.tests", factory: { _ in SwiftLogNoOpLogHandler() })
        let configuration = PostgresConnection.Configuration(
            host: location.host, port: location.port, username: location.user, password: location.password,
            database: location.database, tls: .disable)
        let c = try await PostgresConnection.connect(configuration: configuration, id: 99, logger: logger)
        do {
            let value = try await body(c, logger)
            try? await c.close()
            return value
        } catch {
            try? await c.close()
            throw error
        }
    }
}
