import FetchCastTestSupport
import Foundation
import Testing

/// `files` and `forget` on PostgreSQL print, remove and renumber as on SQLite: the sample and a
/// small file in both engines, each forgotten and ingested again, every reader compared after.
struct PostgresForgetCLITests {
    /// A line of `files --format json` (keys in snake case).
    struct FileLine: Decodable, Equatable {
        var id: Int64
        var name: String
        var sha256: String
        var format: String
        var gzip: Bool
        var sizeBytes: Int64
        var rows: Int64
        var rejected: Int64
        var ingestedAt: String
    }

    /// `files`' table with its `ingested_at` column masked, with the spaces after it (the engines
    /// ingested at other instants, and the column is as wide as its longest instant).
    static func masked(_ table: String) -> String {
        table.replacingOccurrences(of: #"(\d{4}-\d\d-\d\dT[0-9:.]+Z|ingested_at) +"#, with: "<ingested_at> ", options: .regularExpression)
    }

    /// Runs the same command on both stores and expects success and the same stdout and stderr
    /// (`mayFail`: the same failure on both, as `model --device` of a device whose events were forgotten.)
    static func same(_ workspace: Workspace, _ postgres: String, _ arguments: [String], _ note: String, mayFail: Bool = false) throws {
        let a = try workspace.run(arguments + ["--db", "fetchcast.sqlite"])
        let b = try workspace.run(arguments + ["--db", postgres])
        #expect(a.status == 0 || mayFail, "\(note) \(arguments): \(a.err)")
        #expect(b.status == a.status, "\(note) \(arguments): \(b.err)")
        #expect(b.out == a.out, "\(note) \(arguments)")
        #expect(b.err == a.err, "\(note) \(arguments)")
    }

    /// What a reader sees of a store: `stats` (without its `store` and `connected as` rows),
    /// `devices` and `files`, masked; compared between engines and before and after a refused
    /// `forget`.
    static func readers(_ workspace: Workspace, _ db: String) throws -> [String] {
        let stats = try workspace.run(["stats", "--db", db]).out.split(separator: "\n")
            .filter { !$0.hasPrefix("store ") && !$0.hasPrefix("connected as ") }
        let files = try workspace.run(["files", "--db", db])
        let json = try workspace.run(["files", "--db", db, "--format", "json"]).jsonLines(FileLine.self)
            .map { var f = $0; f.ingestedAt = ""; return "\(f)" }
        return stats.map(String.init) + [try workspace.run(["devices", "--db", db, "--top", "3"]).out, masked(files.out), files.err] + json
    }

    @Test(.enabled(if: PostgresTestDatabase.adminURL != nil, Comment(rawValue: PostgresTestDatabase.skipReason)))
    func forgetGivesTheSameResultsOnBothEngines() async throws {
        let database = try await PostgresTestDatabase.create()
        defer { Task { await database.drop() } }
        let pg = database.url
        // A few minutes of commands waited for: on a thread of its own, not one of the few the
        // concurrent tests share (holding one that long stalled the timed serve tests).
        try await offThread { try Self.forgetAndIngestAgain(pg) }
    }

    /// ``forgetGivesTheSameResultsOnBothEngines()``'s commands, blocking.
    private static func forgetAndIngestAgain(_ pg: String) throws {
        let workspace = try Workspace()
        try workspace.write("edge.csv", PostgresCLITests.edgeCases)
        for db in ["fetchcast.sqlite", pg] {
            for file in [PostgresCLITests.sample, "edge.csv"] {
                let ingest = try workspace.run(["ingest", file, "--db", db])
                #expect(ingest.status == 0, "\(ingest.err)")
            }
        }
        let files = try workspace.run(["files", "--db", pg, "--format", "json"]).jsonLines(FileLine.self)
        #expect(files.map(\.id) == [1, 2])
        #expect(files.map(\.rows) == [32890, 8])
        #expect(files == (try workspace.run(["files", "--db", "fetchcast.sqlite", "--format", "json"]).jsonLines(FileLine.self)).map {
            var f = $0; f.ingestedAt = files[Int($0.id) - 1].ingestedAt; return f
        })
        func compareEverything(_ note: String) throws {
            #expect(try readers(workspace, pg) == (try readers(workspace, "fetchcast.sqlite")), "\(note)")
            try same(workspace, pg, ["export", "events"], note)
            try same(workspace, pg, ["predict", "--at", "2014-01-15T03:00:00Z", "--format", "json"], note)
            // After its file is forgotten, café is no device to predict for, as to model.
            try same(workspace, pg, ["predict", "--device", "caf\u{E9}", "--format", "csv"], note, mayFail: true)
            try same(workspace, pg, ["model", "--device", "19_F"], note, mayFail: true)
            try same(workspace, pg, ["export", "model"], note)
        }
        try compareEverything("both files")
        // The last file (its id and event numbers are taken again by the next ingest), then the
        // first (the other file keeps its numbers), each ingested again afterwards.
        let sampleHash = String(files[0].sha256.prefix(10))
        for (forget, file, gone) in [("edge.csv", "edge.csv", 8), (sampleHash, PostgresCLITests.sample, 32890)] {
            for db in ["fetchcast.sqlite", pg] {
                let r = try workspace.run(["forget", forget, "--db", db])
                #expect(r.status == 0, "\(r.err)")
                #expect(r.err.contains("forgot \(file): \(gone) events removed (sha256 "), "\(r.err)")
                #expect(r.out.isEmpty)
            }
            try compareEverything("after forgetting \(file)")
            for db in ["fetchcast.sqlite", pg] {
                #expect(try workspace.run(["ingest", file, "--db", db]).status == 0)
            }
            try compareEverything("after ingesting \(file) again")
        }
        let after = try workspace.run(["files", "--db", pg, "--format", "json"]).jsonLines(FileLine.self)
        #expect(after.map(\.id) == [2, 3] && after.map(\.rows) == [8, 32890])
        if let password = ProcessInfo.processInfo.environment["PGPASSWORD"], !password.isEmpty {
            let r = try workspace.run(["forget", "nothing.csv", "--db", pg])
            #expect(!r.out.contains(password) && !r.err.contains(password))
        }
    }

    /// A name or hash that matches no file, or more than one, is refused with SQLite's message and
    /// exit status, and both stores are left exactly as they were.
    @Test(.enabled(if: PostgresTestDatabase.adminURL != nil, Comment(rawValue: PostgresTestDatabase.skipReason)))
    func aRefusedForgetLeavesTheDatabaseAsItWas() async throws {
        let steps = try Steps()
        let database = try await PostgresTestDatabase.create()
        defer { Task { await database.drop() } }
        let pg = database.url
        // The same path ingested twice with other contents: two files of one name.
        let before = try await { () async throws -> [String] in
            let workspace = steps.workspace
            for db in ["fetchcast.sqlite", pg] {
                try workspace.write("day.csv", "time,device,app,event\n1417400000,19_F,com.viber.voip,launch\n")
                #expect(try workspace.run(["ingest", "day.csv", "--db", db]).status == 0)
                try workspace.write("day.csv", "time,device,app,event\n1417400100,newcomer,news,launch\n")
                #expect(try workspace.run(["ingest", "day.csv", "--db", db]).status == 0)
                #expect(try workspace.run(["predict", "--db", db]).status == 0)  // saves model state
            }
            let before = try Self.readers(workspace, pg)
            #expect(before == (try Self.readers(workspace, "fetchcast.sqlite")))
            return before
        }()
        let modelState = try await database.strings(Self.modelState)
        #expect(modelState.contains { $0.hasPrefix("device:") } && modelState.contains { $0.hasPrefix("population:") })
        let url = database.url
        let after = try await { () async throws -> [String] in
            try Self.refuseForgets(steps.workspace, pg, url: url)
            return try Self.readers(steps.workspace, pg)
        }()
        #expect(after == before)
        #expect(try await database.strings(Self.modelState) == modelState)
    }

    /// Every model state's key and watermark, the fleet's and the devices'.
    private static let modelState = """
        SELECT key || ':' || watermark FROM (SELECT key, watermark FROM model_state UNION ALL SELECT key, watermark FROM device_state) s
        ORDER BY key
        """

    /// A workspace handed from one blocking step of a test to the next (one step at a time).
    private final class Steps: @unchecked Sendable {
        let workspace: Workspace
        init() throws { workspace = try Workspace() }
    }

    /// Forgets that match no file, or more than one: SQLite's message and status on both.
    private static func refuseForgets(_ workspace: Workspace, _ pg: String, url: String) throws {
        for (argument, message) in [
            ("nothing.csv", "no ingested file is named or hashed 'nothing.csv' (see `fetchcast files`)"),
            ("0123456789abcdef", "no ingested file is named or hashed '0123456789abcdef' (see `fetchcast files`)"),
            ("day.csv", "'day.csv' matches 2 files; give the full SHA-256 (see `fetchcast files`)"),
        ] {
            let sqlite = try workspace.run(["forget", argument, "--db", "fetchcast.sqlite"])
            let postgres = try workspace.run(["forget", argument, "--db", pg])
            #expect(sqlite.status == 1 && postgres.status == 1, "\(postgres.err)")
            #expect(postgres.err.contains(message), "\(postgres.err)")
            #expect(postgres.err.replacingOccurrences(of: url, with: "fetchcast.sqlite") == sqlite.err, "\(postgres.err)")
            #expect(postgres.out.isEmpty)
        }
    }
}
