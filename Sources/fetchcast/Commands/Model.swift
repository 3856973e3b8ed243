import ArgumentParser
import FetchCastModel
import FetchCastPredict
import FetchCastStore
import FetchCastTrace

extension FetchCast {
    struct Model: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "model",
            abstract: "Show what the model learned for a device: hour-of-week session likelihood, quiet hours, co-usage.",
            discussion: "The grid shades expected session starts per hour (a session is a launch after more than 30 min without one), local time, Monday first.")

        @OptionGroup var store: StoreOptions

        @Option(help: "The device.")
        var device: String

        @Option(help: "Only this app (default: all apps together).")
        var app: String?

        func run() async throws {
            try await store.withModelStore(.readSavingWhenWritable) { try await run(on: $0) }
        }

        private func run(on s: any ModelStore) async throws {
            var out = FileSink.standardOutput()
            do {
                let repository = ModelRepository(modelStore: s)
                let snapshot = try await repository.refresh(devices: [device])
                if let failure = repository.saveFailure { FetchCast.warnUnsaved(failure) }
                let view = try ModelView(snapshot: snapshot, device: device, app: app)
                view.write(to: &out)
            } catch {
                throw FetchCast.fail("\(error)")
            }
            try FetchCast.finish(out)
        }
    }
}
