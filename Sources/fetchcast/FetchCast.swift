import ArgumentParser
import FetchCastCore
import Foundation
import FetchCastStore
import FetchCastTrace

#if canImport(Glibc)
import Glibc
#endif

@main
struct FetchCast: AsyncParsableCommand {
    static let version = "0.6.0"

    static let configuration = CommandConfiguration(
        commandName: "fetchcast",
        abstract: "Learn when people use their apps and fetch content just before they do.",
        discussion: """
            Typical session:
              fetchcast ingest Data/ubiqlog-sample.csv.gz   # trace -> ./fetchcast.sqlite
              fetchcast stats                               # what the store holds
              fetchcast devices                             # device ids, with their top apps
            """,
        version: version,
        subcommands: [Ingest.self, Stats.self, Devices.self, Files.self, Forget.self, Predict.self, Model.self, Evaluate.self, Export.self, Conditions.self, Habits.self, Bench.self, Serve.self]
    )

    /// Runs the command line; a first word that is no subcommand but close to one is answered
    /// with the one it most likely meant (`fetchcast predcit` → "did you mean 'predict'?").
    static func main() async {
        acceptEndingSignals()
        if let word = CommandLine.arguments.dropFirst().first, let usage = unknownSubcommand(word) {
            var err = FileSink.standardError()
            print(usage, to: &err)
            Foundation.exit(ExitCode.validationFailure.rawValue)
        }
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }

    /// Unblocks SIGINT, SIGTERM and SIGHUP for this thread and those it starts. A process may
    /// be started with them blocked (Foundation's `Process` run from a Dispatch worker thread
    /// passes that thread's mask on): the signals then stayed pending, and `habits generate`
    /// went on to replace its output after a SIGTERM.
    static func acceptEndingSignals() {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&set, signal) }
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// The usage error for `word` when it is not a subcommand but close to one; `nil` otherwise
    /// (an option, a subcommand, or a word ArgumentParser reports in its own words). Every
    /// subcommand names itself (`commandName`): a name derived from the type's name is
    /// `String(describing:)` of the type, whose dynamic casts scanned the binary's conformance
    /// records at every start (`fetchcast bench predict`: CLI p95 50.2-50.8 ms → 45.5-47.1 ms).
    static func unknownSubcommand(_ word: String) -> String? {
        guard !word.hasPrefix("-") else { return nil }
        let names = configuration.subcommands.map { $0._commandName }
        guard !names.contains(word), let meant = NearestName.suggestion(for: word, among: names) else { return nil }
        return "Error: '\(word)' is not a fetchcast command; did you mean '\(meant)'? (fetchcast --help lists them)"
    }

    func run() throws {
        var err = FileSink.standardError()
        print(
            """
            fetchcast \(Self.version): learns when each device opens each app, and fetches just before.

            Try:
              fetchcast ingest Data/ubiqlog-sample.csv.gz   read a trace into ./fetchcast.sqlite
              fetchcast stats                               see what the store holds
              fetchcast devices                             list device ids for --device
              fetchcast --help                              every subcommand
            """, to: &err)
    }
}

extension FetchCast {
    /// Flushes standard output: exits quietly when the reader closed it (`| head`), else names
    /// what could not be written and exits 1.
    static func finish(_ out: FileSink) throws {
        if !out.flush() {
            throw fail(OutputError(path: "-", reason: String(cString: strerror(out.failure ?? EIO)), code: out.failure ?? EIO))
        }
    }

    /// Commits an output (renames it into place, or flushes standard output); a closed pipe
    /// exits quietly, another failure is named and exits 1.
    static func finish(_ out: OutputFile) throws {
        do { try out.commit() } catch { throw fail(error) }
    }

    /// Opens an output (`-` is standard output), refusing one that is a directory or one of
    /// `protected`; a refusal is named and exits 1.
    static func output(_ path: String, protecting protected: ProtectedFiles) throws -> OutputFile {
        do { return try OutputFile(path: path, protecting: protected) } catch { throw fail(error) }
    }

    /// Reports an output error on stderr and exits 1; a closed pipe exits 0 quietly.
    static func fail(_ error: OutputError) -> ExitCode {
        if error.isClosedPipe { return ExitCode.success }
        return fail(error.description)
    }

    /// Warns on stderr that the model state folded for this answer could not be saved (the
    /// answer itself is complete, computed in memory).
    static func warnUnsaved(_ failure: StoreError) {
        var err = FileSink.standardError()
        if failure.isReadOnly {
            print("note: \(failure.path) is read-only (the file or its folder cannot be written), so it was opened read-only; answered from memory without saving the learned state, so every call folds the same events again", to: &err)
            return
        }
        print("warning: the learned state could not be saved in the store (\(failure.description)); answered from memory, so the next call folds the same events again", to: &err)
    }

    /// Reports a runtime error on stderr and exits 1.
    static func fail(_ message: String) -> ExitCode {
        var err = FileSink.standardError()
        print("error: \(message)", to: &err)
        return ExitCode.failure
    }
}
