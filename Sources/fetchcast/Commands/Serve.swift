import ArgumentParser
import FetchCastCore
import FetchCastPostgres
import FetchCastServe
import FetchCastStore
import FetchCastTrace
import Foundation
import Logging

extension FetchCast {
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "serve",
            abstract: "Serve the store over HTTP: ingest events, plans per device and for every device, models.",
            discussion: """
                The routes, tokens and limits are in docs/serve.md; GET /openapi.json describes the \
                API. Plans are what `predict` prints for the same parameters, from the server's \
                clock when no `at` is given. Prints the URL it listens on to stderr; SIGTERM or \
                SIGINT stops accepting, finishes the requests in flight and exits 0.
                """)

        @OptionGroup var store: StoreOptions

        @Option(help: "The address to listen on.")
        var host = "127.0.0.1"

        @Option(parsing: .unconditional, help: "The port; 0 picks a free one (printed).")
        var port = 8080

        @Option(help: ArgumentHelp("Bearer tokens: one 'NAME SCOPE SHA256-HEX' a line, SCOPE read, ingest or admin.", valueName: "file"))
        var tokens: String?

        @Option(help: ArgumentHelp("The largest request body as sent, gzip compressed or not (413 beyond): bytes, or with KiB, MiB or GiB.", valueName: "size"))
        var maxBody = "64MiB"

        @Option(help: ArgumentHelp("The largest request body once decompressed (413 beyond): bytes, or with KiB, MiB or GiB.", valueName: "size"))
        var maxDecodedBody = "256MiB"

        @Option(parsing: .unconditional, help: ArgumentHelp("The most rows (lines, blank ones included) a request body may hold (413 beyond).", valueName: "n"))
        var maxEvents = 1_000_000

        @Option(parsing: .unconditional, help: ArgumentHelp(
            "How long a read (a plan, a model, a page of devices, a batch of /v1/plans) may take from its arrival, the wait for a reader thread included; past it the read is stopped and answered 503 with Retry-After.",
            valueName: "seconds"))
        var requestDeadline = 10.0

        @Option(parsing: .unconditional, help: ArgumentHelp(
            "After SIGTERM or SIGINT, how long requests in flight may go on (an upload, a sweep); past it they are cut, their bodies removed and nothing of them stored.",
            valueName: "seconds"))
        var shutdownGrace = 10.0

        @Option(help: ArgumentHelp(
            "Reads (plans, models, pages of devices) answered at once, each on a thread. Default: 2 on SQLite (a read keeps a core busy, on a connection of its own); on PostgreSQL 16 threads a core, sharing twice the cores' connections (a read waits for the server; a plan answered from memory waits for its check without a thread), or twice the cores with --plans-in-memory 0.",
            valueName: "n"))
        var readThreads: Int?

        @Option(help: ArgumentHelp(
            "On PostgreSQL: plans kept ahead held in this process's memory, answered after one check of the database shared by every plan asked meanwhile (a plan asked after a POST to any server returned still includes its events), loaded after the warm-up until full. Default 64MiB; 0 reads every plan from the database. SQLite reads its file, in process.",
            valueName: "size"))
        var plansInMemory: String?

        @Flag(help: "Serve without tokens: every request may do everything (numeric loopback addresses only: 127.0.0.0/8, ::1).")
        var insecureNoAuth = false

        @Flag(help: ArgumentHelp(
            "Do not keep every device's caught-up scheduler and its plans saved in the store in the background: first plans then replay each device's history, and the store stays smaller."))
        var noWarmUp = false

        func validate() throws {
            if tokens == nil && !insecureNoAuth {
                throw ValidationError("--tokens FILE is needed (or --insecure-no-auth, for a loopback address only); docs/serve.md says how to make tokens.")
            }
            if tokens != nil && insecureNoAuth {
                throw ValidationError("--tokens and --insecure-no-auth exclude each other.")
            }
            if insecureNoAuth && !ServeConfiguration.isLoopback(host) {
                throw ValidationError("--insecure-no-auth serves only on a numeric loopback address (127.0.0.1, ::1; not a name, which could resolve anywhere), not on '\(host)'; give --tokens FILE.")
            }
            guard Self.bytes(maxDecodedBody) != nil else {
                throw ValidationError("--max-decoded-body '\(maxDecodedBody)' is not a size; write it as 1048576, 512KiB, 256MiB or 1GiB.")
            }
            try Limits.requestDeadlineSeconds.validate(requestDeadline, flag: "--request-deadline")
            try Limits.shutdownGraceSeconds.validate(shutdownGrace, flag: "--shutdown-grace")
            if let readThreads, !(1...256).contains(readThreads) { throw ValidationError("--read-threads must be from 1 to 256.") }
            if let plansInMemory, plansInMemory != "0", Self.bytes(plansInMemory) == nil {
                throw ValidationError("--plans-in-memory '\(plansInMemory)' is not a size; write it as 0, 16777216, 64MiB or 1GiB.")
            }
            guard maxEvents > 0 else { throw ValidationError("--max-events must be at least 1.") }
            guard (0...65535).contains(port) else { throw ValidationError("--port must be from 0 to 65535.") }
            guard Self.bytes(maxBody) != nil else {
                throw ValidationError("--max-body '\(maxBody)' is not a size; write it as 1048576, 512KiB, 64MiB or 1GiB.")
            }
        }

        func run() async throws {
            if !store.isPostgres { try store.refuseWhatCannotBeAStore() }
            var configuration = ServeConfiguration(databasePath: store.path)
            if store.isPostgres {
                // Bodies are spooled in a directory of this process's own under $TMPDIR (several
                // servers on one database may share a machine), with many read threads sharing
                // few connections: ServeConfiguration(store:).
                do {
                    configuration = ServeConfiguration(store: try .postgres(url: store.path))
                } catch {
                    throw FetchCast.fail("\(error)")
                }
                if let plansInMemory { configuration.keepPlansInMemory(bytes: Self.bytes(plansInMemory) ?? 0) }
            }
            if let readThreads { configuration.readThreads = readThreads }
            configuration.host = host
            configuration.port = port
            configuration.maxBody = Self.bytes(maxBody) ?? 64 << 20
            configuration.maxDecodedBody = Int64(Self.bytes(maxDecodedBody) ?? 256 << 20)
            configuration.maxEvents = Int64(maxEvents)
            configuration.warmsSchedulers = !noWarmUp
            configuration.requestDeadline = .milliseconds(Int64(requestDeadline * 1000))
            if let tokens {
                do {
                    configuration.tokens = try TokenTable(contentsOf: tokens)
                } catch {
                    throw FetchCast.fail("\(error)")
                }
            }
            LoggingSystem.bootstrap(StreamLogHandler.standardError)
            let host = self.host.contains(":") ? "[\(self.host)]" : self.host
            let path = store.displayName
            do {
                let (app, _) = try await buildApplication(configuration: configuration) { port in
                    var err = FileSink.standardError()
                    print("fetchcast serve: listening on http://\(host):\(port) (store \(path))", to: &err)
                    _ = err.flush()
                }
                try await ServeRunner.run(app, shutdownGrace: .milliseconds(Int64(shutdownGrace * 1000)), logger: Logger(label: "fetchcast.serve"))
            } catch {
                throw FetchCast.fail("\(error)")
            }
        }

        /// Bytes of a size like 1048576, 512KiB, 64MiB or 1GiB.
        static func bytes(_ text: String) -> Int? {
            let units: [(String, Int)] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("B", 1)]
            for (suffix, factor) in units where text.hasSuffix(suffix) {
                guard let n = Int(text.dropLast(suffix.count)), n > 0, n <= Int.max / factor else { return nil }
                return n * factor
            }
            guard let n = Int(text), n > 0 else { return nil }
            return n
        }
    }
}
