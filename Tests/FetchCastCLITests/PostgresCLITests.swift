import FetchCastTestSupport
import Foundation
import Testing

/// `--db postgres://…`: ingest, stats and devices on PostgreSQL print what they print on
/// SQLite; every other command says it does not run there yet.
struct PostgresCLITests {
    static let sample = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Data/ubiqlog-sample.csv.gz").path

    /// A URL no server answers: the refusals must come before any connection.
    static let nowhere = "postgres://ann:secret@127.0.0.1:1/fleet"

    @Test(arguments: [
        ["predict", "--device", "d"], ["model", "--device", "d", "--app", "a"], ["export", "events"], ["files"],
        ["forget", "x"], ["evaluate", "--out", "out"], ["serve", "--insecure-no-auth"],
    ])
    func otherCommandsRefusePostgres(arguments: [String]) throws {
        let workspace = try Workspace()
        let r = try workspace.run(arguments + ["--db", Self.nowhere])
        #expect(r.status != 0)
        #expect(r.err.contains("`fetchcast \(arguments[0])` does not run on PostgreSQL yet (only ingest, stats and devices do)"), "\(r.err)")
        #expect(!r.err.contains("secret") && !r.out.contains("secret"))
        #expect(!FileManager.default.fileExists(atPath: workspace.path("fetchcast.sqlite")))
    }

    @Test func theEnvironmentVariableNamesAPostgresStoreToo() throws {
        let workspace = try Workspace()
        let r = try workspace.run(["files"], environment: ["FETCHCAST_DB": Self.nowhere])
        #expect(r.status == 1)
        #expect(r.err.contains("`fetchcast files` does not run on PostgreSQL yet"), "\(r.err)")
    }

    @Test func anUnreachableServerIsNamedWithoutThePassword() throws {
        let workspace = try Workspace()
        let r = try workspace.run(["stats", "--db", Self.nowhere])
        #expect(r.status == 1)
        #expect(r.err.contains("postgres://ann@127.0.0.1:1/fleet: could not connect"), "\(r.err)")
        #expect(!r.err.contains("secret"))
    }

    /// The bundled sample, ingested into SQLite and into PostgreSQL: the same `stats` (but for
    /// the `store` row) and the same `devices` in every format.
    @Test(.enabled(if: PostgresTestDatabase.adminURL != nil, Comment(rawValue: PostgresTestDatabase.skipReason)))
    func sampleGivesTheSameOutputOnBothEngines() async throws {
        let workspace = try Workspace()
        let database = try await PostgresTestDatabase.create()
        defer { Task { await database.drop() } }
        for db in ["fetchcast.sqlite", database.url] {
            let ingest = try workspace.run(["ingest", Self.sample, "--db", db, "--format", "json"])
            #expect(ingest.status == 0, "\(ingest.err)")
            #expect(ingest.err.contains("32890 events in"), "\(ingest.err)")
            let again = try workspace.run(["ingest", Self.sample, "--db", db])
            #expect(again.status == 0)
            #expect(again.err.contains("already ingested"), "\(again.err)")
        }
        let sqliteStats = try workspace.run(["stats", "--db", "fetchcast.sqlite"])
        let postgresStats = try workspace.run(["stats"], environment: ["FETCHCAST_DB": database.url])
        #expect(postgresStats.status == 0, "\(postgresStats.err)")
        func withoutStoreRow(_ text: String) -> [Substring] { text.split(separator: "\n").filter { !$0.hasPrefix("store ") } }
        #expect(withoutStoreRow(postgresStats.out) == withoutStoreRow(sqliteStats.out))
        #expect(postgresStats.out.contains("store                             \(database.url)\n"), "\(postgresStats.out)")
        #expect(postgresStats.out.contains("events                            32890\n"))
        let statsJSON = try workspace.run(["stats", "--db", database.url, "--format", "json"])
        #expect(statsJSON.out == (try workspace.run(["stats", "--db", "fetchcast.sqlite", "--format", "json"])).out)
        for format in ["table", "csv", "json"] {
            let sqlite = try workspace.run(["devices", "--db", "fetchcast.sqlite", "--format", format, "--top", "5"])
            let postgres = try workspace.run(["devices", "--db", database.url, "--format", format, "--top", "5"])
            #expect(postgres.status == 0, "\(postgres.err)")
            #expect(postgres.out == sqlite.out, "devices --format \(format)")
            #expect(postgres.out.split(separator: "\n").count >= 14)
        }
        if let password = ProcessInfo.processInfo.environment["PGPASSWORD"], !password.isEmpty {
            #expect(!postgresStats.out.contains(password) && !postgresStats.err.contains(password))
        }
    }
}
