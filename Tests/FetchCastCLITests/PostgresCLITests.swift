import FetchCastTestSupport
import Foundation
import Testing

/// `--db postgres://…`: ingest, stats, devices, model, predict, export and evaluate on
/// PostgreSQL print what they print on SQLite (serve: `PostgresServeTests`; files and forget:
/// `PostgresForgetCLITests`).
struct PostgresCLITests {
    static let sample = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Data/ubiqlog-sample.csv.gz").path

    /// A URL no server answers.
    static let nowhere = "postgres://ann:secret@127.0.0.1:1/fleet"

    /// No command refuses PostgreSQL any more: `files` and `forget` (the last two to run there)
    /// try to connect, and fail naming the URL without its password, creating no SQLite file.
    @Test(arguments: [["files"], ["forget", "x"]])
    func filesAndForgetConnectToPostgres(arguments: [String]) throws {
        let workspace = try Workspace()
        let r = try workspace.run(arguments + ["--db", Self.nowhere])
        #expect(r.status == 1)
        #expect(r.err.contains("postgres://ann@127.0.0.1:1/fleet: could not connect"), "\(r.err)")
        #expect(!r.err.contains("does not run on PostgreSQL"), "\(r.err)")
        #expect(!r.err.contains("secret") && !r.out.contains("secret"))
        #expect(!FileManager.default.fileExists(atPath: workspace.path("fetchcast.sqlite")))
    }

    @Test func theEnvironmentVariableNamesAPostgresStoreToo() throws {
        let workspace = try Workspace()
        let r = try workspace.run(["files"], environment: ["FETCHCAST_DB": Self.nowhere])
        #expect(r.status == 1)
        #expect(r.err.contains("postgres://ann@127.0.0.1:1/fleet: could not connect"), "\(r.err)")
    }

    @Test func anUnreachableServerIsNamedWithoutThePassword() throws {
        let workspace = try Workspace()
        let r = try workspace.run(["stats", "--db", Self.nowhere])
        #expect(r.status == 1)
        #expect(r.err.contains("postgres://ann@127.0.0.1:1/fleet: could not connect"), "\(r.err)")
        #expect(!r.err.contains("secret"))
    }

    /// `stats` on a URL with a password in it, in any shape (issue 40): the message names the
    /// URL without any part of the password, and no SQLite file is made of a mistyped URL.
    @Test(arguments: [
        "postgres://u@127.0.0.1:1/db?password=S3cretPW",
        "postgres://u:S3c?retPW@127.0.0.1:1/db",
        "postgres://u:S3c/re@t#PW@127.0.0.1:1/db",
        "postgres://u@127.0.0.1:1/db?password=S3c&retPW",
        "postgresql:u:S3cretPW@127.0.0.1:1/db",
    ])
    func statsNeverPrintsAPassword(url: String) throws {
        let workspace = try Workspace()
        for arguments in [["stats", "--db", url], ["devices", "--db", url]] {
            let r = try workspace.run(arguments)
            #expect(r.status != 0)
            for text in [r.out, r.err] { #expect(!text.contains("S3c") && !text.contains("PW"), "\(text)") }
        }
        let r = try workspace.run(["stats"], environment: ["FETCHCAST_DB": url])
        #expect(!r.err.contains("S3c") && !r.err.contains("PW"), "\(r.err)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: workspace.path(".")).filter { $0.contains("S3c") }.isEmpty)
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
        func withoutStoreRows(_ text: String) -> [Substring] {
            text.split(separator: "\n").filter { !$0.hasPrefix("store ") && !$0.hasPrefix("connected as ") }
        }
        #expect(withoutStoreRows(postgresStats.out) == withoutStoreRows(sqliteStats.out))
        #expect(postgresStats.out.hasPrefix("store                             \(database.url)\n"), "\(postgresStats.out)")
        #expect(postgresStats.out.contains("events                            32890\n"))
        // The user the server says the session runs as (issue 40 item 6), on the second row;
        // none on SQLite.
        let user = try await database.strings("SELECT current_user::text")
        #expect(user.count == 1 && postgresStats.out.split(separator: "\n").dropFirst().first == "connected as                      \(user[0])",
                "\(postgresStats.out)")
        #expect(!sqliteStats.out.contains("connected as"))
        let statsJSON = try workspace.run(["stats", "--db", database.url, "--format", "json"])
        let sqliteJSON = try workspace.run(["stats", "--db", "fetchcast.sqlite", "--format", "json"]).out
        func object(_ text: String) throws -> [String: AnyHashable] {
            try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: AnyHashable] ?? [:]
        }
        var postgresObject = try object(statsJSON.out)
        #expect(postgresObject.removeValue(forKey: "connected_as") == user.first.map { AnyHashable($0) })
        #expect(postgresObject == (try object(sqliteJSON)) && !sqliteJSON.contains("connected_as"), "\(statsJSON.out)")
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

    /// Same-instant events, names that only look alike, publishes and `state` rows, beside the
    /// sample: what the order of a scan and the matching of names are tested on.
    static let edgeCases = """
        time,device,app,event,result,bytes,duration_ms,network,power,battery,low_power
        1700000000,caf\u{E9},news,launch,,,,,,,
        1700000000,cafe\u{301},news,launch,,,,,,,
        1700000000,,news,publish,,,,,,,
        1699999900,caf\u{E9},,state,,,,cellular,battery,40,on
        1700000000,caf\u{E9},mail,launch,,,,,,,
        1700003600,cafe\u{301},news,fetch,newData,2048,300,,,,
        1700007200,caf\u{E9},news,launch,,,,,,,
        1700007200,cafe\u{301},news,launch,,,,,,,

        """

    /// The sample and the edge cases, ingested into SQLite and into PostgreSQL: `export events`
    /// (every filter, both formats, stdout and a file) and `evaluate` without a trace print and
    /// write the same bytes from both.
    @Test(.enabled(if: PostgresTestDatabase.adminURL != nil, Comment(rawValue: PostgresTestDatabase.skipReason)))
    func exportAndEvaluateGiveTheSameOutputOnBothEngines() async throws {
        let workspace = try Workspace()
        let database = try await PostgresTestDatabase.create()
        defer { Task { await database.drop() } }
        try workspace.write("edge.csv", Self.edgeCases)
        for db in ["fetchcast.sqlite", database.url] {
            for file in [Self.sample, "edge.csv"] {
                let ingest = try workspace.run(["ingest", file, "--db", db])
                #expect(ingest.status == 0, "\(ingest.err)")
            }
        }
        func same(_ arguments: [String], file: String? = nil) throws {
            let sqlite = try workspace.run(arguments + ["--db", "fetchcast.sqlite"] + (file.map { ["-o", "sqlite-" + $0] } ?? []))
            let postgres = try workspace.run(arguments + ["--db", database.url] + (file.map { ["-o", "postgres-" + $0] } ?? []))
            #expect(postgres.status == sqlite.status, "\(arguments): \(postgres.err)")
            #expect(postgres.stdout == sqlite.stdout, "\(arguments)")
            #expect(postgres.err == sqlite.err, "\(arguments)")
            if let file {
                let a = try Data(contentsOf: URL(fileURLWithPath: workspace.path("sqlite-" + file)))
                let b = try Data(contentsOf: URL(fileURLWithPath: workspace.path("postgres-" + file)))
                #expect(a == b && !a.isEmpty, "\(arguments) -o")
            }
        }
        let all = try workspace.run(["export", "events", "--db", database.url])
        #expect(all.status == 0, "\(all.err)")
        #expect(all.out.split(separator: "\n").count == 1 + 32890 + 8)
        #expect(all.out.hasPrefix("time_utc,utc_offset_s,device,app,event,result,bytes,duration_ms,time_us,file_id,line,network,power,battery,low_power\n"))
        try same(["export", "events"])
        try same(["export", "events", "--format", "json"])
        try same(["export", "events"], file: "events.csv")
        for filter in [
            ["--device", "caf\u{E9}"], ["--device", "cafe\u{301}"], ["--device", ""], ["--device", "19_F", "--app", "com.viber.voip"],
            ["--app", "news"], ["--from", "2013-12-01", "--to", "2013-12-02"], ["--from", "1700000000", "--to", "1700003600"],
            ["--device", "nobody"], ["--app", "nothing"], ["--from", "2014-01-02", "--to", "2014-01-01"],
        ] {
            try same(["export", "events"] + filter)
        }
        try workspace.write("devices.txt", "19_F\ncafe\u{301}\n")
        for (i, extra) in [[String](), ["--devices", "devices.txt", "--detail"], ["--from", "2013-12-01", "--to", "2014-02-01"]].enumerated() {
            let flags = ["--policies", "none,interval,oracle,hourly,learned", "--budgets", "12"] + extra
            let sqlite = try workspace.run(["evaluate", "--db", "fetchcast.sqlite", "--out", "sqlite-\(i)"] + flags)
            let postgres = try workspace.run(["evaluate", "--db", database.url, "--out", "postgres-\(i)"] + flags)
            #expect(sqlite.status == 0, "\(sqlite.err)")
            #expect(postgres.status == 0, "\(postgres.err)")
            // The summary table and notes; not the progress lines, which depend on the machine's speed.
            func summary(_ text: String) -> [Substring] { text.split(separator: "\n").filter { !$0.hasPrefix("replaying ") } }
            #expect(summary(postgres.err.replacingOccurrences(of: "postgres-\(i)", with: "sqlite-\(i)")) == summary(sqlite.err), "evaluate \(extra)")
            #expect(summary(sqlite.err).contains { $0.hasPrefix("policy ") })
            let written = try FileManager.default.contentsOfDirectory(atPath: workspace.path("sqlite-\(i)")).sorted()
            #expect(try FileManager.default.contentsOfDirectory(atPath: workspace.path("postgres-\(i)")).sorted() == written)
            #expect(written.contains("run.json") && written.contains("summary.csv"))
            for name in written {
                let a = try Data(contentsOf: URL(fileURLWithPath: workspace.path("sqlite-\(i)/\(name)")))
                let b = try Data(contentsOf: URL(fileURLWithPath: workspace.path("postgres-\(i)/\(name)")))
                #expect(a == b, "evaluate \(extra): \(name)")
            }
        }
        // The model layer (schema 2's model state and numbering): the same answers from a first
        // fold, from the saved state (the commands after the first), and after one more file.
        for round in 0..<2 {
            if round == 1 {
                try workspace.write("later.csv", "time,device,app,event\n1417400000,19_F,com.viber.voip,launch\n1417400100,newcomer,news,launch\n")
                for db in ["fetchcast.sqlite", database.url] { #expect(try workspace.run(["ingest", "later.csv", "--db", db]).status == 0) }
            }
            try same(["predict"])
            try same(["predict", "--at", "2014-01-15T03:00:00Z", "--format", "json"])
            try same(["predict", "--device", "caf\u{E9}", "--format", "csv"])
            try same(["predict", "--device", "nobody"])
            try same(["model", "--device", "19_F"])
            try same(["model", "--device", "cafe\u{301}", "--app", "news"])
            try same(["export", "model"] + (round == 0 ? [] : ["--device", "newcomer"]), file: "model-\(round).csv")
            try same(["export", "cousage", "--device", "19_F"], file: "cousage-\(round).csv")
            if round == 0 {
                try same(["export", "predictions", "--from", "2013-12-20", "--to", "2013-12-22", "--format", "json"], file: "predictions.json")
            }
        }
        #expect(try workspace.run(["predict", "--db", database.url]).out.contains("newcomer") == (try workspace.run(["predict"]).out.contains("newcomer")))
    }

    /// `export -o` on PostgreSQL writes a temporary file renamed into place: a failed export
    /// leaves an existing output as it was, and no temporary file behind.
    @Test(.enabled(if: PostgresTestDatabase.adminURL != nil, Comment(rawValue: PostgresTestDatabase.skipReason)))
    func aFailedExportLeavesTheOutputAsItWas() async throws {
        let workspace = try Workspace()
        let database = try await PostgresTestDatabase.create()
        defer { Task { await database.drop() } }
        #expect(try workspace.run(["ingest", "--db", database.url, Self.sample]).status == 0)
        try workspace.write("out.csv", "before\n")
        let r = try workspace.run(["export", "events", "--db", database.url, "--device", "nobody", "-o", "out.csv"])
        #expect(r.status == 1)
        #expect(r.err.contains("nobody"), "\(r.err)")
        #expect(try String(contentsOfFile: workspace.path("out.csv"), encoding: .utf8) == "before\n")
        let ok = try workspace.run(["export", "events", "--db", database.url, "--device", "19_F", "-o", "out.csv"])
        #expect(ok.status == 0, "\(ok.err)")
        #expect(try String(contentsOfFile: workspace.path("out.csv"), encoding: .utf8).hasPrefix("time_utc,"))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: workspace.directory).filter { $0.contains("out.csv") && $0 != "out.csv" }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }
}
