import ArgumentParser
import FetchCastStore
import FetchCastTrace

extension FetchCast {
    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "stats",
            abstract: "Summarise the store: devices, apps, events by kind, time span, days with launches.",
            discussion: """
                Reads per-file aggregates kept at ingest, so it is fast on any size of store. A store \
                path that does not exist is an error (`fetchcast ingest` creates the store). "Days with launches (device-days)" counts the \
                distinct (device, local calendar day) pairs with at least one launch; evaluate's \
                device_days is another measure: each device's span from its first to its last \
                launch in days (quiet days inside it whole, its first and last day in part), summed \
                over devices.
                """)

        @OptionGroup var store: StoreOptions

        @Option(help: "Output format on stdout.")
        var format: OutputFormat = .table

        func run() async throws {
            let stats = try await store.withLog(.read) { try await $0.stats() }
            var out = FileSink.standardOutput()
            switch format {
            case .json:
                print(JSON.encode(stats), to: &out)
            case .table:
                var rows: [(String, String)] = [
                    ("store", store.displayName),
                    ("files", String(stats.files)),
                    ("events", String(stats.events)),
                    ("  launches", String(stats.launches)),
                    ("  fetches", String(stats.fetches)),
                    ("  publishes", String(stats.publishes)),
                    ("rejected rows", String(stats.rejected)),
                    ("devices", String(stats.devices)),
                    ("apps", String(stats.apps)),
                    ("first event", stats.firstEvent ?? "-"),
                    ("last event", stats.lastEvent ?? "-"),
                    ("days with launches (device-days)", String(stats.activeDeviceDays)),
                    ("launches per day with launches", CSVField.fixed(stats.launchesPerDeviceDay, decimals: 1)),
                ]
                if let states = stats.states { rows.insert(("  states", String(states)), at: 6) }
                // Who the server says the session is (the URL may name no user: PGUSER, or the
                // system user, then).
                if let user = stats.connectedAs { rows.insert(("connected as", user), at: 1) }
                let width = rows.map(\.0.count).max() ?? 0
                for (k, v) in rows {
                    print(k + String(repeating: " ", count: width - k.count + 2) + v, to: &out)
                }
            }
            try FetchCast.finish(out)
        }
    }
}
