import ArgumentParser
import FetchCastTrace

extension FetchCast {
    struct Conditions: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "conditions",
            abstract: "Device conditions (network, power, battery, Low Power Mode) for traces that have none.",
            subcommands: [Generate.self])
    }
}

extension FetchCast.Conditions {
    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "generate",
            abstract: "Overlay a seeded, plausible layer of state rows on a launch trace.",
            discussion: """
                Per device: overnight charging on home Wi-Fi in its quietest hours (by launches), \
                home Wi-Fi most evenings before them, cellular days with Wi-Fi and offline spells, \
                a battery that drains with time and launches and charges back, Low Power Mode \
                below --low-power-below. Writes the input's events and the new state rows as CSV \
                with the network,power,battery,low_power columns (gzip when FILE ends in .gz). The \
                same seed, flags and input give byte-identical output. The model is described in \
                docs/evaluation.md ("Generated conditions"). Holds the trace in memory; the bundled \
                sample takes well under a second.
                """)

        @Argument(help: ArgumentHelp("The launch trace (CSV or JSON Lines, gzip or plain; - for stdin).", valueName: "trace"))
        var trace: String

        @Option(name: .shortAndLong, help: ArgumentHelp("Write to this file (default: - for stdout; gzip when it ends in .gz). An existing file is replaced once the output is complete (else it is left as it was); the input trace and a store are refused.", valueName: "file"))
        var out = "-"

        @Option(parsing: .unconditional, help: "The generator's seed.")
        var seed: UInt64 = 1
        @Option(parsing: .unconditional, help: "Simulation step in minutes (conditions change only at steps).")
        var stepMinutes = 5
        @Option(parsing: .unconditional, help: "Length of the overnight window (charging, home Wi-Fi), placed at each device's quietest hours.")
        var nightHours = 7
        @Option(parsing: .unconditional, help: "Hours at home before the night window.")
        var eveningHours = 4
        @Option(parsing: .unconditional, help: "Chance of home Wi-Fi on an evening.")
        var eveningWifiProbability = 0.85
        @Option(parsing: .unconditional, help: "Chance, each daytime hour, that a Wi-Fi spell begins.")
        var daytimeWifiProbability = 0.2
        @Option(parsing: .unconditional, help: "Mean length of a daytime Wi-Fi spell, minutes.")
        var daytimeWifiMinutes = 60.0
        @Option(parsing: .unconditional, help: "Chance, each daytime hour, that an offline spell begins.")
        var offlineProbability = 0.02
        @Option(parsing: .unconditional, help: "Mean length of an offline spell, minutes.")
        var offlineMinutes = 20.0
        @Option(parsing: .unconditional, help: "Latest plug-in after the night starts and earliest unplug before it ends, minutes.")
        var plugJitterMinutes = 60.0
        @Option(parsing: .unconditional, help: "Battery percent at each device's first event.")
        var startBattery = 80.0
        @Option(parsing: .unconditional, help: "Battery percent drained per hour on battery.")
        var drainPerHour = 1.5
        @Option(parsing: .unconditional, help: "Extra battery percent drained per launch.")
        var drainPerLaunch = 0.4
        @Option(parsing: .unconditional, help: "Battery percent gained per hour while charging.")
        var chargePerHour = 40.0
        @Option(parsing: .unconditional, help: "Plug in for a daytime top-up below this battery percent.")
        var topUpBelow = 12.0
        @Option(parsing: .unconditional, help: "Length of a daytime top-up, minutes.")
        var topUpMinutes = 60.0
        @Option(parsing: .unconditional, help: "Low Power Mode may come on below this battery percent.")
        var lowPowerBelow = 20.0
        @Option(parsing: .unconditional, help: "Chance that the user turns Low Power Mode on when offered.")
        var lowPowerProbability = 0.6
        @Option(parsing: .unconditional, help: "Report the battery when it moved this many points.")
        var batteryStep = 5

        var options: OverlayOptions {
            var o = OverlayOptions()
            o.seed = seed
            o.stepMinutes = stepMinutes
            o.nightHours = nightHours
            o.eveningHours = eveningHours
            o.eveningWifiProbability = eveningWifiProbability
            o.daytimeWifiProbability = daytimeWifiProbability
            o.daytimeWifiMinutes = daytimeWifiMinutes
            o.offlineProbability = offlineProbability
            o.offlineMinutes = offlineMinutes
            o.plugJitterMinutes = plugJitterMinutes
            o.startBattery = startBattery
            o.drainPerHour = drainPerHour
            o.drainPerLaunch = drainPerLaunch
            o.chargePerHour = chargePerHour
            o.topUpBelow = topUpBelow
            o.topUpMinutes = topUpMinutes
            o.lowPowerBelow = lowPowerBelow
            o.lowPowerProbability = lowPowerProbability
            o.batteryStep = batteryStep
            return o
        }

        func validate() throws {
            if let problem = options.problem { throw ValidationError(problem + ".") }
        }

        func run() throws {
            var err = FileSink.standardError()
            let summary: ConditionOverlay.Summary
            var file = try FetchCast.output(out, protecting: ProtectedFiles(store: StoreOptions.storeInUse, inputs: [trace]))
            do {
                if out.hasSuffix(".gz") {
                    var sink = try GzipSink(into: file)
                    summary = try ConditionOverlay.overlay(input: trace, to: &sink, options: options)
                    sink.finish()
                } else {
                    summary = try ConditionOverlay.overlay(input: trace, to: &file, options: options)
                }
            } catch {
                throw FetchCast.fail("\(error)")
            }
            try FetchCast.finish(file)
            print("\(out): \(summary.events) events and \(summary.states) state rows for \(summary.devices) devices (seed \(seed))", to: &err)
        }
    }
}
