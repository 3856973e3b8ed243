import ArgumentParser
import FetchCastStore
import FetchCastTrace

extension FetchCast {
    struct Ingest: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Read trace files (CSV or JSON Lines, gzip or plain) into the store.",
            discussion: """
                Each file is one transaction: strict by default, the first invalid row stops that \
                file with exit status 1 and it adds nothing (files before it stay ingested). A file \
                whose bytes were ingested before adds nothing and is reported as already ingested. \
                Use - to read standard input. A one-line summary goes to stderr; --format json \
                prints a JSON summary on stdout.
                """)

        @OptionGroup var store: StoreOptions

        @Argument(help: ArgumentHelp("Trace files; - reads standard input.", valueName: "file"))
        var files: [String]

        @Flag(help: "Ingest the valid rows and write each rejected row, with its reason, to the rejects file.")
        var skipInvalid = false

        @Option(help: ArgumentHelp("Where --skip-invalid writes rejected rows as CSV (file,line,column,reason,text).", valueName: "path"))
        var rejects = "fetchcast-rejects.csv"

        @Option(help: ArgumentHelp("UTC offset of times given as Unix seconds, e.g. +01:00 (default: UTC).", valueName: "offset"))
        var utcOffset: String?

        @Option(help: "Summary format on stdout: table prints nothing on stdout; json prints a JSON object.")
        var format: OutputFormat = .table

        @Flag(help: "No progress line and no summary on stderr.")
        var quiet = false

        func validate() throws {
            if let utcOffset, Timestamp.parseOffset(utcOffset) == nil {
                throw ValidationError("--utc-offset '\(utcOffset)' is not an offset; write it as +01:00, -0530 or Z.")
            }
            if files.filter({ $0 == "-" }).count > 1 {
                throw ValidationError("standard input (-) can be given only once.")
            }
        }

        func run() throws {
            let s = try store.open(create: true)
            var err = FileSink.standardError()
            let progress = ProgressLine(enabled: !quiet && err.isTerminal)
            var rejectSink: FileSink?
            var rejectsWritten = 0
            if skipInvalid {
                do {
                    rejectSink = try FileSink(path: rejects)
                    rejectSink?.write("file,line,column,reason,text\n")
                } catch {
                    throw FetchCast.fail(error.description)
                }
            }
            let options = Ingestor.Options(
                trace: TraceOptions(defaultUTCOffsetSeconds: utcOffset.flatMap(Timestamp.parseOffset) ?? 0),
                skipInvalid: skipInvalid,
                onReject: { error, text in
                    rejectsWritten += 1
                    rejectSink?.write(CSVField.line([error.file, String(error.line), String(error.column), error.problem.message, text]))
                },
                onProgress: { p in progress.update(p) })
            let ingestor = Ingestor(store: s, options: options)
            var results: [FileIngestResult] = []
            var failure: String?
            for file in files {
                do {
                    let r = try ingestor.ingest(path: file)
                    progress.clear()
                    results.append(r)
                    if !quiet {
                        switch r.status {
                        case .ingested:
                            let rate = r.seconds > 0 ? Double(r.events) / r.seconds : 0
                            var line = "\(r.path): \(r.events) events in \(CSVField.fixed(r.seconds, decimals: 2)) s (\(Self.human(rate)) events/s)"
                            if r.rejected > 0 { line += ", \(r.rejected) rejected rows written to \(rejects)" }
                            print(line, to: &err)
                        case .alreadyIngested:
                            print("\(r.path): already ingested (sha256 \(r.sha256.prefix(12))…); nothing added", to: &err)
                        }
                    }
                } catch let error as TraceError {
                    progress.clear()
                    failure = error.description
                    break
                } catch let error as StoreError {
                    progress.clear()
                    failure = error.description
                    break
                }
            }
            rejectSink?.flush()
            let added = results.filter { $0.status == .ingested }
            let total = added.reduce(Int64(0)) { $0 + $1.events }
            if format == .json {
                var out = FileSink.standardOutput()
                let summary = IngestSummary(
                    files: results, events: total, rejected: added.reduce(0) { $0 + $1.rejected },
                    failed: failure, rejectsFile: skipInvalid ? rejects : nil)
                print(JSON.encode(summary), to: &out)
                try FetchCast.finish(out)
            }
            if let failure {
                print("error: \(failure)", to: &err)
                let kept = results.map(\.path)
                let failedFile = files[results.count]
                print("\(failedFile) added nothing" + (kept.isEmpty ? "." : "; \(kept.joined(separator: ", ")) before it stay ingested."), to: &err)
                throw ExitCode.failure
            }
            if !quiet && files.count > 1 {
                print("\(files.count) files: \(total) events added, \(results.count - added.count) already ingested", to: &err)
            }
        }

        static func human(_ rate: Double) -> String {
            if rate >= 1e6 { return CSVField.fixed(rate / 1e6, decimals: 2) + " M" }
            if rate >= 1e3 { return CSVField.fixed(rate / 1e3, decimals: 1) + " k" }
            return CSVField.fixed(rate, decimals: 0)
        }
    }
}

/// The JSON summary of `fetchcast ingest --format json`.
struct IngestSummary: Codable {
    var schema = 1
    var files: [FileIngestResult]
    var events: Int64
    var rejected: Int64
    var failed: String?
    var rejectsFile: String?

    enum CodingKeys: String, CodingKey {
        case schema, files, events, rejected, failed
        case rejectsFile = "rejects_file"
    }
}
