import ArgumentParser
import FetchCastCore
import FetchCastReplay
import FetchCastTrace

extension FetchCast {
    struct Habits: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "habits",
            abstract: "Seeded launch traces of regular users, to check that a scheduler anticipates habits.",
            subcommands: [Generate.self, Score.self])
    }
}

extension FetchCast.Habits {
    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "generate",
            abstract: "Write a seeded launch trace of regular users (archetypes) to a file.",
            discussion: """
                Archetypes, each --devices-per-archetype devices (ids like morning-reader-1): morning-reader (news \
                about 07:50 daily), commuter (weekdays: news or podcast about 07:40 and 17:50), \
                shift-worker (alternating weeks: news 05:30 and chat 14:30, or news 13:30 and \
                chat 22:30), weekend-reader (news about 07:00 on weekdays, 09:30 on weekends), \
                evening-reader (news or mail about 21:00 on 70% of days, ±45 min), heavy (about \
                --heavy-launches-per-day launches a day over 15 apps in bursty sessions), and, \
                only when named, daily-0800 (news at exactly 08:00:00, chat at 12:30:00 and \
                21:10:00, every day, nothing random), gym-mwf (fitness about 06:15 on Mondays, \
                Wednesdays and Fridays only), anytime-mail (mail 3 times a day at random times \
                from 08:00 to 22:00: daily, without a habit) and heavy-early (heavy, up at about \
                06:45 on weekdays and 09:00 at weekends, chat first). Light users also open --noise-apps other \
                apps at random times. Writes CSV launch rows with duration_ms, sorted by time \
                (gzip when FILE ends in .gz). The same seed and flags give byte-identical \
                output. The model is described in docs/habits.md. The default set takes well \
                under a second.
                """)

        @Option(name: .shortAndLong, help: ArgumentHelp("Write to this file (default: - for stdout; gzip when it ends in .gz). An existing file is replaced once the output is complete (else it is left as it was); a store is refused.", valueName: "file"))
        var out = "-"

        @Option(parsing: .unconditional, help: "The generator's seed.")
        var seed: UInt64 = 1
        @Option(help: ArgumentHelp("Archetypes, comma-separated (daily-0800, gym-mwf, anytime-mail and heavy-early only when named).", valueName: "list"))
        var archetypes = HabitArchetype.defaultSet.map(\.rawValue).joined(separator: ",")
        @Option(parsing: .unconditional, help: "Devices per archetype.")
        var devicesPerArchetype = 1
        @Option(parsing: .unconditional, help: "Days generated.")
        var days = 42
        @Option(parsing: .unconditional, help: ArgumentHelp("The first day, local (2024-03-04 is a Monday).", valueName: "YYYY-MM-DD"))
        var start = "2024-03-04"
        @Option(parsing: .unconditional, help: ArgumentHelp("The devices' UTC offset, written in every time.", valueName: "offset"))
        var utcOffset = "+01:00"
        @Option(parsing: .unconditional, help: "Standard deviation of a habit's time of day, minutes (the evening reader uses 45).")
        var jitterMinutes = 7.0
        @Option(parsing: .unconditional, help: "Share of days a habit happens (the evening reader uses 0.7).")
        var presence = 0.95
        @Option(parsing: .unconditional, help: "Other apps each light user opens at random times, each on about 3 days a week (0 to 10).")
        var noiseApps = 2
        @Option(parsing: .unconditional, help: "Chance that a habit launch is followed by another of the same app 2–10 minutes later.")
        var reopenProbability = 0.1
        @Option(parsing: .unconditional, help: "The heavy user's mean launches per day.")
        var heavyLaunchesPerDay = 100.0

        func options() throws -> HabitOptions {
            var o = HabitOptions()
            o.seed = seed
            switch HabitOptions.parseArchetypes(archetypes) {
            case .success(let list): o.archetypes = list
            case .failure(let error): throw ValidationError(error.message + ".")
            }
            o.devicesPerArchetype = devicesPerArchetype
            o.days = days
            guard start.count == 10, let seconds = Timestamp.parseArgument(start) else {
                throw ValidationError("--start '\(start)' is not a date; write it as YYYY-MM-DD, e.g. 2024-03-04.")
            }
            o.startDay = Int(seconds / 86_400)
            guard let offset = Timestamp.parseOffset(utcOffset) else {
                throw ValidationError("--utc-offset '\(utcOffset)' is not an offset; write it as +01:00, -0530 or Z.")
            }
            o.utcOffsetSeconds = offset
            o.jitterMinutes = jitterMinutes
            o.presence = presence
            o.noiseApps = noiseApps
            o.reopenProbability = reopenProbability
            o.heavyLaunchesPerDay = heavyLaunchesPerDay
            if let problem = o.problem { throw ValidationError(problem + ".") }
            return o
        }

        func validate() throws {
            _ = try options()
        }

        func run() throws {
            var err = FileSink.standardError()
            let options = try options()
            let summary: HabitTraceGenerator.Summary
            // Written whole or not at all (a temporary file renamed into place), never over a store.
            var file = try FetchCast.output(out, protecting: ProtectedFiles(store: StoreOptions.storeInUse))
            do {
                let progress = ProgressLine(enabled: err.isTerminal)
                defer { progress.clear() }
                let report = { (done: Int, total: Int) in progress.update("habits generate: days", done: done, of: total) }
                if out.hasSuffix(".gz") {
                    var sink = try GzipSink(into: file)
                    summary = try HabitTraceGenerator.generate(options: options, to: &sink, progress: report)
                    sink.finish()
                } else {
                    summary = try HabitTraceGenerator.generate(options: options, to: &file, progress: report)
                }
            } catch let error as TraceError {
                throw FetchCast.fail(error.description)
            } catch let error as HabitOptionsError {
                throw FetchCast.fail(error.message)
            }
            try FetchCast.finish(file)
            print("\(out): \(summary.launches) launches for \(summary.devices) devices over \(options.days) days (seed \(seed))", to: &err)
        }
    }
}

extension FetchCast.Habits {
    struct Score: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "score",
            abstract: "Score the habit clock against the gaps and hours it replaces, on traces.",
            discussion: """
                Every half hour of each device's history, for every app whose habit clock speaks \
                then (used at most twice a day over at least 7 days, idle at least 2 hours), the \
                chance of a session in the next τ that the scheduler values a look with, from the \
                habit clock, and the chance the gaps and hour-of-week rates give in its place; each \
                known from the events before the half hour only, from the device's own history (no \
                population prior). Both are scored against whether the app was launched in that \
                window: mean log loss (nats a window) and Brier score, lower is better. Prints one \
                row a device and one for all (tab-separated). docs/model.md has the tables.
                """)

        @Argument(help: ArgumentHelp("Trace files (CSV or JSON Lines, gzip or not), each in time order per device.", valueName: "trace"))
        var traces: [String]

        @Option(help: ArgumentHelp("Only the devices listed in this file (one id a line).", valueName: "file"))
        var devices: String?

        @Option(help: ArgumentHelp("The window τ: 30m, 1800, 1800s or 2h.", valueName: "duration"))
        var tau = "30m"

        func validate() throws {
            guard let seconds = FetchCast.Evaluate.signedDuration(tau) else {
                throw ValidationError("--tau '\(tau)' is not a duration; write it as 30m, 1800, 1800s or 2h.")
            }
            try Limits.tauSeconds.validate(seconds, flag: "--tau", got: tau)
        }

        func run() throws {
            let ids: DeviceIDs?
            do {
                ids = try devices.map(EvaluationOptions.loadDeviceList)
            } catch {
                throw FetchCast.fail(error.description)
            }
            let result: (devices: [HabitScoring.DeviceScore], all: HabitScoring.DeviceScore)
            do {
                result = try HabitScoring.score(traces: traces, devices: ids, tau: EvaluationOptions.parseDuration(tau) ?? 1800)
            } catch {
                throw FetchCast.fail(error.description)
            }
            let out = FileSink.standardOutput()
            out.write("device\twindows\tlaunched\tlog_loss_hours\tlog_loss_habit\tbrier_hours\tbrier_habit\n")
            for row in result.devices + [result.all] {
                func f(_ x: Double) -> String { String(format: "%.4f", x) }
                out.write("\(row.device)\t\(row.windows)\t\(row.launched)\t\(f(row.logLossBase))\t\(f(row.logLossHabit))\t\(f(row.brierBase))\t\(f(row.brierHabit))\n")
            }
            try FetchCast.finish(out)
        }
    }
}
