import ArgumentParser
import FetchCastCore
import FetchCastExport
import FetchCastPredict
import FetchCastStore
import FetchCastTrace

extension FetchCast {
    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "Write the store's events or what the model learned as CSV or JSON Lines, for pandas or a spreadsheet.",
            discussion: """
                KIND is one of:
                  events       rows of the store's `events` view, in time order
                  model        per device, app, weekday (0 = Monday) and local hour: launch \
                probability, session and new-content rates per hour, the evidence behind them
                  cousage      per device and app pair: P(a session of next_app within 30 min \
                after a launch of app), support (launches of app)
                  predictions  what `fetchcast predict` plans over --from/--to
                Columns are documented in docs/export.md. CSV (RFC 4180 quoting, header row, \
                LF line ends) unless --format json (JSON Lines, each record with "schema": 1). \
                Folds newly ingested events into the model first (except for events), as predict \
                does. Cost on the bundled sample (33k events, 14 devices): events 0.1 s, model \
                for every app 1 s; predictions read each device's history once (then O(its events)). \
                On a PostgreSQL --db, events only (docs/postgres.md).
                """)

        @OptionGroup var store: StoreOptions

        @Argument(help: ArgumentHelp("events, model, cousage or predictions.", valueName: "kind"))
        var kind: ExportKind

        @Option(help: "Only this device (default: every device; for events, '' selects publishes to every device).")
        var device: String?

        @Option(help: "Only rows whose app column is this app (default: every app).")
        var app: String?

        @Option(help: ArgumentHelp("events: at or after this time; predictions: window start (default: each device's last event). ISO 8601, YYYY-MM-DD or Unix seconds.", valueName: "time"))
        var from: String?

        @Option(help: ArgumentHelp("events: before this time; predictions: window end (default: 24 h after its start).", valueName: "time"))
        var to: String?

        @Option(parsing: .unconditional, help: ArgumentHelp("model, cousage: only each device's N apps with the most sessions (default: every app); predictions: apps planned for (default: 5); 1 to 1000.", valueName: "n"))
        var topApps: Int?

        @Option(parsing: .unconditional, help: "predictions: fetches per device per local day, 1 to 1440 (the cap is its whole part).")
        var budget: Double = 24

        @Option(name: .shortAndLong, help: ArgumentHelp("Write to this file (default: - for stdout). An existing file is replaced once the export is complete (else it is left as it was); the store itself is refused.", valueName: "file"))
        var output = "-"

        @Option(help: "Output format: csv or json (JSON Lines).")
        var format: ExportFormat = .csv

        func validate() throws {
            for (flag, value) in [("--from", from), ("--to", to)] {
                if let value, Timestamp.parseArgument(value) == nil {
                    throw ValidationError("\(flag) '\(value)' is not a time; use ISO 8601 (2013-11-20T08:00:00+01:00), a date or Unix seconds.")
                }
            }
            if kind == .model || kind == .cousage, from != nil || to != nil {
                throw ValidationError("--from/--to apply to events and predictions only; \(kind.rawValue) describes the model as of each device's last event.")
            }
            if kind == .events, topApps != nil {
                throw ValidationError("--top-apps applies to model, cousage and predictions only.")
            }
            if let topApps { try Limits.topApps.validate(topApps, flag: "--top-apps") }
            try Limits.budget.validate(budget, flag: "--budget")
        }

        func run() async throws {
            let request = ExportRequest(
                kind: kind, device: device, app: app, from: from.flatMap(Timestamp.parseArgument),
                to: to.flatMap(Timestamp.parseArgument), topApps: topApps, budget: budget, format: format)
            if kind == .events { return try await exportEvents(request) }
            // A PostgreSQL database is no file an output could replace.
            var out = try FetchCast.output(output, protecting: store.isPostgres ? ProtectedFiles() : ProtectedFiles(store: store.path))
            try await store.withModelStore(.readSavingWhenWritable) { s in
                do {
                    try await Exporter.export(request, from: ModelRepository(modelStore: s), to: &out, onSaveFailure: FetchCast.warnUnsaved)
                } catch {
                    throw FetchCast.fail("\(error)")
                }
            }
            try FetchCast.finish(out)
        }

        /// `events`, on either engine, through the event log's scan.
        private func exportEvents(_ request: ExportRequest) async throws {
            // A PostgreSQL database is no file an output could replace.
            var out = try FetchCast.output(output, protecting: store.isPostgres ? ProtectedFiles() : ProtectedFiles(store: store.path))
            _ = try await store.withLog(.readSavingWhenWritable) { try await Exporter.exportEvents(request, from: $0, to: &out) }
            try FetchCast.finish(out)
        }
    }
}

extension ExportKind: ExpressibleByArgument {}
extension ExportFormat: ExpressibleByArgument {}
