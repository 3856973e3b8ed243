import ArgumentParser
import FetchCastStore
import FetchCastTrace

extension FetchCast {
    struct Devices: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "devices",
            abstract: "List the devices in the store: events, launches, first and last event, most launched apps.",
            discussion: """
                Use the ids it prints with predict --device, model --device and export --device \
                (ids are case-sensitive). Reads per-file aggregates kept at ingest, so it is fast \
                on any size of store; publishes to every device are not counted per device. \
                --format json prints JSON Lines, one record per device with "schema": 1.
                """)

        @OptionGroup var store: StoreOptions

        @Option(parsing: .unconditional, help: ArgumentHelp("Most launched apps to list per device.", valueName: "n"))
        var top: Int = 3

        @Option(help: "Output format: table, json (JSON Lines) or csv.")
        var format: TabularFormat = .table

        func validate() throws {
            guard top >= 0 else { throw ValidationError("--top must be 0 or more.") }
        }

        func run() async throws {
            let devices = try await store.withLog(.read) { try await $0.devices(top: top) }
            if devices.isEmpty {
                var err = FileSink.standardError()
                print("note: \(store.displayName) has no devices yet; ingest a trace first (fetchcast ingest FILE)", to: &err)
            }
            var out = FileSink.standardOutput()
            switch format {
            case .json:
                for d in devices { print(JSON.encode(d), to: &out) }
            case .csv:
                var header = ["device", "events", "launches", "first_event", "last_event"]
                for i in stride(from: 1, through: top, by: 1) { header += ["top_app_\(i)", "top_app_\(i)_launches"] }
                out.write(CSVField.line(header))
                for d in devices {
                    var row = [d.device, String(d.events), String(d.launches), d.firstEvent, d.lastEvent]
                    for i in 0..<top {
                        row += i < d.topApps.count ? [d.topApps[i].app, String(d.topApps[i].launches)] : ["", ""]
                    }
                    out.write(CSVField.line(row))
                }
            case .table:
                let rows = [["device", "events", "launches", "first_event", "last_event", "top_apps"]] + devices.map { d in
                    [d.device, String(d.events), String(d.launches), d.firstEvent, d.lastEvent,
                     d.topApps.map { "\($0.app) (\($0.launches))" }.joined(separator: ", ")]
                }
                TextTable.write(rows, rightAligned: [1, 2], to: &out)
            }
            try FetchCast.finish(out)
        }
    }
}
