import ArgumentParser
import FetchCastCore
import FetchCastStore
import FetchCastTrace

#if canImport(Glibc)
import Glibc
#endif

extension FetchCast {
    struct Ingest: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ingest",
            abstract: "Read trace files (CSV or JSON Lines, gzip or plain) into the store.",
            discussion: """
                Each file is one transaction: strict by default, the first invalid row stops that \
                file with exit status 1 and it adds nothing; files before it stay ingested, files \
                after it are not tried unless --keep-going. A store file this ingest created is \
                removed again when nothing could be added to it. A file \
                whose bytes were ingested before adds nothing and is reported as already ingested. \
                A row whose event the store already holds (the same device, instant — whatever UTC \
                offset it was written with; the stored one keeps its own — app, event, result, bytes, duration_ms and, for state rows, conditions), from \
                a reordered or gzipped copy of an ingested file say, is skipped and counted; each \
                stored event stands for one row, so rows repeated within a file are all kept. \
                Use - to read standard input. A one-line summary goes to stderr; --format json \
                prints a JSON summary on stdout.
                """)

        @OptionGroup var store: StoreOptions

        @Argument(help: ArgumentHelp("Trace files; - reads standard input.", valueName: "file"))
        var files: [String]

        @Flag(help: "Ingest the valid rows and write each rejected row, with its reason, to the rejects file.")
        var skipInvalid = false

        @Option(help: ArgumentHelp("Where --skip-invalid writes rejected rows as CSV (file,line,column,reason,text). An existing file is replaced when the ingest ends; the store and the inputs are refused.", valueName: "path"))
        var rejects = "fetchcast-rejects.csv"

        @Option(parsing: .unconditional, help: ArgumentHelp("UTC offset of times given as Unix seconds, e.g. +01:00 (default: UTC).", valueName: "offset"))
        var utcOffset: String?

        @Option(help: "Summary format on stdout: table prints nothing on stdout; json prints a JSON object.")
        var format: OutputFormat = .table

        @Flag(help: "Add rows whose events the store already holds (default: skip and count them). The check costs nothing on an empty store; on a store with events it reads the stored events of each batch's devices and time span, and a file as large as the store goes in through the (device, time) index instead of building it afresh.")
        var keepDuplicates = false

        @Flag(help: "Go on past a bad file: ingest every good file, report every bad one, and exit 1 at the end if any failed. Each file still adds all of its events or none.")
        var keepGoing = false

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

        func run() async throws {
            // A store this ingest creates is removed again when nothing could be added to it
            // (an SQLite file; a PostgreSQL database is never removed).
            let storeExisted = store.isPostgres || access(store.path, F_OK) == 0
            var err = FileSink.standardError()
            // Checked before the store is opened (or created): the rejects file may not be the
            // store, nor a trace being read.
            let rejectFile = skipInvalid
                ? try FetchCast.output(rejects, protecting: ProtectedFiles(store: store.path, inputs: files)) : nil
            let outcome: Outcome
            do {
                let log = try await store.openLog(create: true)
                do {
                    outcome = try await ingestFiles(into: log, rejects: rejectFile, err: &err)
                } catch {
                    await log.close()
                    throw error
                }
                await log.close()
            }
            // An SQLite store is closed here (`log`, its only reference, went out of scope).
            if !storeExisted && !outcome.failures.isEmpty && outcome.storeIsEmpty {
                for suffix in ["", "-wal", "-shm", "-journal"] { unlink(store.path + suffix) }
                if !quiet { print("removed \(store.path): this ingest created it and added nothing", to: &err) }
            }
            if !outcome.failures.isEmpty { throw ExitCode.failure }
        }

        /// What `ingestFiles` did.
        private struct Outcome {
            var failures: [IngestFailure]
            /// Whether the store holds no file after the ingest.
            var storeIsEmpty: Bool
        }

        private func ingestFiles(into s: any EventLogWriter, rejects rejectSink: OutputFile?, err: inout FileSink) async throws -> Outcome {
            let progress = ProgressLine(enabled: !quiet && err.isTerminal)
            var rejectsWritten = 0
            rejectSink?.write("file,line,column,reason,text\n")
            var options = IngestOptions(
                trace: TraceOptions(defaultUTCOffsetSeconds: utcOffset.flatMap(Timestamp.parseOffset) ?? 0),
                skipInvalid: skipInvalid,
                onReject: { error, text in
                    rejectsWritten += 1
                    rejectSink?.write(CSVField.line([error.file, String(error.line), String(error.column), error.problem.message, text]))
                },
                onProgress: { p in progress.update(p) })
            options.keepsDuplicates = keepDuplicates
            var results: [FileIngestResult] = []
            var failures: [IngestFailure] = []
            var notTried: [String] = []
            for (index, file) in files.enumerated() {
                let message: String
                do {
                    let r = try await s.append(path: file, name: nil, options: options)
                    progress.clear()
                    results.append(r)
                    if !quiet {
                        switch r.status {
                        case .ingested where r.events == 0 && r.duplicates > 0:
                            var line = "\(r.path.escapingControlCharacters): " + (r.duplicates == 1 ? "its 1 event is" : "all \(r.duplicates) events are")
                                + " already in the store; nothing added (--keep-duplicates adds them)"
                            if r.rejected > 0 { line += "; \(Plural.count(r.rejected, "rejected row")) written to \(rejects)" }
                            print(line, to: &err)
                        case .ingested:
                            let rate = r.seconds > 0 ? Double(r.events) / r.seconds : 0
                            var line = "\(r.path.escapingControlCharacters): \(Plural.count(r.events, "event")) in \(CSVField.fixed(r.seconds, decimals: 2)) s (\(Self.human(rate)) events/s)"
                            if r.rejected > 0 { line += ", \(Plural.count(r.rejected, "rejected row")) written to \(rejects)" }
                            if r.duplicates > 0 { line += "; skipped \(r.duplicates) already in the store (--keep-duplicates adds them)" }
                            print(line, to: &err)
                        case .alreadyIngested:
                            print("\(r.path.escapingControlCharacters): already ingested (sha256 \(r.sha256.prefix(12))…); nothing added", to: &err)
                        }
                    }
                    continue
                } catch let error as TraceError {
                    message = error.description
                } catch let error as StoreError {
                    message = error.description
                }
                progress.clear()
                failures.append(IngestFailure(file: file, error: message))
                print("error: \(message)", to: &err)
                if keepGoing {
                    print("\(file.escapingControlCharacters) added nothing; going on with the next file (--keep-going)", to: &err)
                    continue
                }
                let kept = results.map(\.path)
                print("\(file.escapingControlCharacters) added nothing" + (kept.isEmpty ? "." : "; \(kept.map(\.escapingControlCharacters).joined(separator: ", ")) before it stay ingested."), to: &err)
                notTried = Array(files[(index + 1)...])
                if !notTried.isEmpty {
                    print("not tried: \(notTried.map(\.escapingControlCharacters).joined(separator: ", ")) (ingest stops at the first bad file; --keep-going ingests every good one)", to: &err)
                }
                break
            }
            if let rejectSink {
                do { try rejectSink.commit() } catch {
                    // The events are ingested; the report of the rows left out is not written.
                    print("error: \(error)", to: &err)
                    failures.append(IngestFailure(file: rejects, error: error.description))
                }
            }
            let added = results.filter { $0.status == .ingested }
            let total = added.reduce(Int64(0)) { $0 + $1.events }
            let skipped = added.reduce(Int64(0)) { $0 + $1.duplicates }
            if format == .json {
                var out = FileSink.standardOutput()
                let summary = IngestSummary(
                    files: results, events: total, duplicates: skipped, rejected: added.reduce(0) { $0 + $1.rejected },
                    failed: failures.first?.error, failures: failures, notTried: notTried,
                    rejectsFile: skipInvalid ? rejects : nil)
                print(JSON.encode(summary), to: &out)
                try FetchCast.finish(out)
            }
            if !quiet && files.count > 1 && (failures.isEmpty || keepGoing) {
                var line = "\(files.count) files: \(Plural.count(total, "event")) added"
                if skipped > 0 { line += ", \(skipped) skipped as already in the store" }
                line += ", \(results.count - added.count) already ingested"
                if !failures.isEmpty {
                    line += ", \(failures.count) failed (\(failures.map(\.file).joined(separator: ", ")))"
                }
                print(line, to: &err)
            }
            var storeIsEmpty = false
            if added.isEmpty, let files = try? await s.fileCount() { storeIsEmpty = files == 0 }
            return Outcome(failures: failures, storeIsEmpty: storeIsEmpty)
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
    /// Rows skipped because the store already held their events.
    var duplicates: Int64
    var rejected: Int64
    /// The first failure's message (kept for readers of schema 1; `failures` lists them all).
    var failed: String?
    /// Every file that failed, with why.
    var failures: [IngestFailure]
    /// Files not tried because an earlier one failed (without --keep-going).
    var notTried: [String]
    var rejectsFile: String?

    enum CodingKeys: String, CodingKey {
        case schema, files, events, duplicates, rejected, failed, failures
        case notTried = "not_tried"
        case rejectsFile = "rejects_file"
    }
}

/// A file `fetchcast ingest` could not add, and why.
struct IngestFailure: Codable {
    var file: String
    var error: String
}
