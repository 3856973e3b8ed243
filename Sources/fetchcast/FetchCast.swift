import ArgumentParser
import FetchCastStore
import FetchCastTrace

#if canImport(Glibc)
import Glibc
#endif

@main
struct FetchCast: AsyncParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "fetchcast",
        abstract: "Learn when people use their apps and fetch content just before they do.",
        discussion: """
            Typical session:
              fetchcast ingest Data/ubiqlog-sample.csv.gz   # trace -> ./fetchcast.sqlite
              fetchcast stats                               # what the store holds
            """,
        version: version,
        subcommands: [Ingest.self, Stats.self, Files.self, Forget.self, Predict.self, Model.self, Evaluate.self, Export.self, Bench.self, Serve.self]
    )

    func run() throws {
        var err = FileSink.standardError()
        print(
            """
            fetchcast \(Self.version): learns when each device opens each app, and fetches just before.

            Try:
              fetchcast ingest Data/ubiqlog-sample.csv.gz   read a trace into ./fetchcast.sqlite
              fetchcast stats                               see what the store holds
              fetchcast --help                              every subcommand
            """, to: &err)
    }
}

extension FetchCast {
    /// Exits quietly when stdout was closed by the reader (`| head`), else with status 1.
    static func finish(_ out: FileSink) throws {
        if !out.flush() {
            if out.failure == EPIPE { throw ExitCode.success }
            throw ExitCode.failure
        }
    }

    /// Reports a runtime error on stderr and exits 1.
    static func fail(_ message: String) -> ExitCode {
        var err = FileSink.standardError()
        print("error: \(message)", to: &err)
        return ExitCode.failure
    }
}
