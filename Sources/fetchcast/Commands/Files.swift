import ArgumentParser
import FetchCastCore
import FetchCastStore
import FetchCastTrace

extension FetchCast {
    struct Files: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "files",
            abstract: "List the files the store holds: name, content hash, rows, when ingested.")

        @OptionGroup var store: StoreOptions

        @Option(help: "Output format on stdout.")
        var format: OutputFormat = .table

        func run() async throws {
            let files = try await store.withLog(.read) { try await $0.files() }
            var out = FileSink.standardOutput()
            switch format {
            case .json:
                for f in files { print(JSON.encode(f), to: &out) }
            case .table:
                let rows = [["sha256", "rows", "rejected", "ingested_at", "name"]]
                    + files.map { [String($0.sha256.prefix(16)), String($0.rows), String($0.rejected), $0.ingestedAt, $0.name.escapingControlCharacters] }
                TextTable.write(rows, rightAligned: [1, 2], to: &out)
            }
            try FetchCast.finish(out)
        }
    }

    struct Forget: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "forget",
            abstract: "Remove one ingested file's events from the store.",
            discussion: "Name the file by the path it was ingested from, its SHA-256, or a unique hash prefix of at least 8 digits (see `fetchcast files`). Learned model state is rebuilt on next use.")

        @OptionGroup var store: StoreOptions

        @Argument(help: ArgumentHelp("The file's path as ingested, or its SHA-256 (prefix).", valueName: "file-or-hash"))
        var file: String

        func run() async throws {
            let removed = try await store.withLog(create: false) { try await $0.forget(file) }
            var err = FileSink.standardError()
            print("forgot \(removed.name.escapingControlCharacters): \(Plural.count(removed.rows, "event")) removed (sha256 \(removed.sha256.prefix(12))…)", to: &err)
        }
    }
}
