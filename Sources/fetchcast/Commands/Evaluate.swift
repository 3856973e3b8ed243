import ArgumentParser
import FetchCastCore
import FetchCastModel
import FetchCastReplay
import FetchCastStore
import FetchCastTrace
import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension FetchCast {
    struct Evaluate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "evaluate",
            abstract: "Replay traces through fetch policies: freshness at each launch against radio energy.",
            discussion: """
                Exact semantics (v1; v2 with `state` rows) in docs/evaluation.md. Reads traces as `fetchcast ingest` does \
                (or, with no TRACE, every event of the store, an SQLite file or a PostgreSQL database), replays every device on every core, \
                and writes DIR/summary.csv, DIR/devices.csv, DIR/slices.csv and DIR/run.json (with --detail also \
                DIR/launches.csv.gz, DIR/fetches.csv.gz, DIR/decisions.csv.gz and DIR/plans.csv.gz; with --delivery apns|fcm \
                also DIR/delivery.csv, semantics d1). A summary table goes to stderr. Two \
                passes over the input; memory grows with devices × apps, not with trace length.
                """)

        @OptionGroup var store: StoreOptions

        @Argument(help: ArgumentHelp("Trace files (- reads standard input); none reads the store.", valueName: "trace"))
        var traces: [String] = []

        @Option(help: ArgumentHelp("Policies, comma-separated: none, interval, oracle, hourly, weekly, learned, learned-blind, planned.", valueName: "list"))
        var policies = "none,interval,oracle,hourly,learned"

        @Option(parsing: .unconditional, help: ArgumentHelp("Daily fetch budgets per device, comma-separated, each 1 to 1440 (a replay's cost grows with the budget).", valueName: "list"))
        var budgets = "12,24"

        @Option(parsing: .unconditional, help: ArgumentHelp("Freshness window τ: 30m, 1800, 1800s, 2h; 1s to 1d.", valueName: "duration"))
        var tau = "30m"

        @Option(parsing: .unconditional, help: "Fetch-enabled apps per device (most launched), 1 to 1000.")
        var topApps = 5

        @Option(help: ArgumentHelp("Radio energy profile: lte (default), wifi, or a JSON file (see Data/energy/).", valueName: "file"))
        var energy = "lte"

        @Option(help: ArgumentHelp("Replay only the devices listed in this file (one id per line).", valueName: "file"))
        var devices: String?

        @Option(help: ArgumentHelp("Replay only events at or after this time (ISO 8601, YYYY-MM-DD or Unix seconds).", valueName: "time"))
        var from: String?

        @Option(help: ArgumentHelp("Replay only events before this time.", valueName: "time"))
        var to: String?

        @Option(name: .customLong("prior-from"), parsing: .upToNextOption, help: ArgumentHelp(
            "Traces the learned policy's population prior is learned from; a replayed device among them is left out of its own prior (default: none, a generic prior).", valueName: "trace"))
        var priorFrom: [String] = []

        @Option(help: ArgumentHelp("Use only these devices of --prior-from (one id per line), e.g. the training half of a split by user.", valueName: "file"))
        var priorDevices: String?

        @Option(parsing: .unconditional, help: ArgumentHelp("How often `planned` asks for a plan (as `predict --at` would), in trace time: 1h, 30m, 900; 1m to 7d (the replay's cost grows as the interval shrinks).", valueName: "duration"))
        var replan = "1h"

        @Flag(help: "`planned` also asks for a plan one second after each event it can see.")
        var replanOnEvent = false

        @Option(help: ArgumentHelp("What `planned` plans from: device (every event of the device) or app (each app from its own events only, ⌊B/k⌋ a day per app).", valueName: "visibility"))
        var visibility: PlanningOptions.Visibility = .device

        @OptionGroup var push: PushDeliveryOptions

        @Option(help: ArgumentHelp("When `planned`'s backend sends each push: send-at (what `predict --delivery` answers: each fetch at its send_at, leaving out those the push service would not deliver by their time or would collapse; the default) or fetch-at (a push at every planned fetch time).", valueName: "when"))
        var pushTiming: PushTimingChoice?

        @Flag(help: "Also write one row per scored launch, per fetch, per fetch the learned policy weighed and per fetch in each plan `planned` asked for (launches.csv.gz, fetches.csv.gz, decisions.csv.gz, plans.csv.gz); slower.")
        var detail = false

        @Option(help: ArgumentHelp("Output directory (created if missing). Outputs there are replaced, each once it is written whole; an output that would replace the store or an input is refused before the replay.", valueName: "dir"))
        var out: String

        @Option(parsing: .unconditional, help: ArgumentHelp("UTC offset of times given as Unix seconds, e.g. +01:00 (default: UTC).", valueName: "offset"))
        var utcOffset: String?

        @Option(parsing: .unconditional, help: "Worker threads (default: every core), 0 to 1024; outputs do not depend on it.")
        var threads = 0

        @Flag(help: "No summary table on stderr.")
        var quiet = false

        @OptionGroup var conditions: ConstraintOptions

        func validate() throws {
            let names = policyList
            guard !names.isEmpty else { throw ValidationError("--policies needs at least one policy, e.g. interval,oracle.") }
            let known = PolicyRegistry.standard.names
            for n in names where !known.contains(n) {
                throw ValidationError("unknown policy '\(n)' in --policies; expected some of \(known.joined(separator: ", ")).")
            }
            guard let b = budgetList, !b.isEmpty else {
                throw ValidationError("--budgets takes numbers separated by commas, e.g. 12,24.")
            }
            for (budget, text) in zip(b, budgetTexts) { try Limits.budget.validate(budget, flag: "--budgets", got: text) }
            guard let tauSeconds = Self.signedDuration(tau) else {
                throw ValidationError("--tau '\(tau)' is not a duration; write it as 30m, 1800, 1800s or 2h.")
            }
            try Limits.tauSeconds.validate(tauSeconds, flag: "--tau", got: tau)
            guard let replanSeconds = Self.signedDuration(replan) else {
                throw ValidationError("--replan '\(replan)' is not a duration; write it as 1h, 30m or 900.")
            }
            try Limits.replanSeconds.validate(replanSeconds, flag: "--replan", got: replan)
            try Limits.topApps.validate(topApps, flag: "--top-apps")
            try Limits.threads.validate(threads, flag: "--threads")
            if let from, Timestamp.parseArgument(from) == nil {
                throw ValidationError("--from '\(from)' is not a time; write ISO 8601 (2013-11-09T23:36:45+01:00), a date (2013-11-09) or Unix seconds.")
            }
            if let to, Timestamp.parseArgument(to) == nil {
                throw ValidationError("--to '\(to)' is not a time; write ISO 8601 (2013-11-09T23:36:45+01:00), a date (2013-11-09) or Unix seconds.")
            }
            if let f = from.flatMap(Timestamp.parseArgument), let t = to.flatMap(Timestamp.parseArgument), f >= t {
                throw ValidationError("--from must be before --to.")
            }
            if let utcOffset, Timestamp.parseOffset(utcOffset) == nil {
                throw ValidationError("--utc-offset '\(utcOffset)' is not an offset; write it as +01:00, -0530 or Z.")
            }
            if !traces.isEmpty && store.db != nil {
                throw ValidationError("give trace files or --db, not both.")
            }
            if priorFrom.contains("-") {
                throw ValidationError("--prior-from reads files only; standard input (-) is for the replayed trace.")
            }
            if priorDevices != nil && priorFrom.isEmpty {
                throw ValidationError("--prior-devices selects devices of --prior-from; give --prior-from too.")
            }
            if traces.filter({ $0 == "-" }).count > 1 {
                throw ValidationError("standard input (-) can be given only once.")
            }
            if push.delivery == .direct, pushTiming != nil {
                throw ValidationError("--push-timing says when `planned` sends its pushes; give --delivery apns or --delivery fcm too.")
            }
        }

        var policyList: [String] { policies.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
        var budgetTexts: [String] { budgets.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
        var budgetList: [Double]? {
            let parts = budgetTexts.map { Double($0) }
            return parts.contains(nil) ? nil : parts.compactMap { $0 }
        }

        /// A duration as `EvaluationOptions.parseDuration` reads it, or its negative after a `-`
        /// (or 0): so `--replan -1h` is refused for its range, not as text.
        static func signedDuration(_ text: String) -> Double? {
            if text.hasPrefix("-") { return EvaluationOptions.parseDuration(String(text.dropFirst())).map { -$0 } }
            if let zero = Double(text.trimmingCharacters(in: CharacterSet(charactersIn: "smhd"))), zero == 0 { return 0 }
            return EvaluationOptions.parseDuration(text)
        }

        func run() async throws {
            var err = FileSink.standardError()
            let showProgress = !quiet && err.isTerminal
            // Not a terminal (a log, CI): a line at most every 10 s, and none in the first 10 s.
            let logProgress = !quiet && !err.isTerminal
            let started = ProcessInfo.processInfo.systemUptime
            var logged = started
            var options = EvaluationOptions(
                policies: policyList, budgets: budgetList ?? [], tau: EvaluationOptions.parseDuration(tau) ?? 1800,
                topApps: topApps, from: from.flatMap(Timestamp.parseArgument), to: to.flatMap(Timestamp.parseArgument),
                detail: detail, threads: threads,
                trace: TraceOptions(defaultUTCOffsetSeconds: utcOffset.flatMap(Timestamp.parseOffset) ?? 0))
            let evaluation: Evaluation
            var log: (any EventLogScanner)?
            do {
                options.energy = try EnergyProfile.load(energy)
                options.constraints = try conditions.load()
                if let devices { options.devices = try EvaluationOptions.loadDeviceList(devices) }
                // No trace: the store's events, on either engine, through its scan.
                if traces.isEmpty { log = try await store.openLog(.read) }
                options.delivery = push.options
                options.planning = PlanningOptions(
                    replan: EvaluationOptions.parseDuration(replan) ?? 3600, replanOnEvent: replanOnEvent, visibility: visibility,
                    sendsAtSendAt: pushTiming != .fetchAt)
                var population: PopulationSample?
                if !priorFrom.isEmpty {
                    let only = try priorDevices.map(EvaluationOptions.loadDeviceList)
                    let pooled = try PriorBuilder.population(traces: priorFrom, devices: only, tau: options.tau, options: options.trace)
                    population = pooled
                    if let replayed = options.devices, case let shared = pooled.overlap(with: replayed), shared > 0 {
                        print("note: \(Plural.count(shared, "replayed device")) \(shared == 1 ? "is" : "are") also in the prior's population; each is replayed with a prior from the others only (leave-one-out)", to: &err)
                    }
                    options.prior = EvaluationOptions.PriorSource(
                        traces: priorFrom, sha256: pooled.sha256, devices: only, pooledDevices: pooled.prior.devices)
                }
                let registry = PolicyRegistry.standard(population: population, planning: options.planning, delivery: options.delivery)
                // Besides the traces and the store (which the evaluator protects), what was read.
                let read = [devices, priorDevices, conditions.constraints, energy].compactMap { $0 }
                let progress: ((String) -> Void)? = showProgress ? { line in err.write("\r\u{1B}[2K" + line) } : logProgress ? { line in
                    let now = ProcessInfo.processInfo.systemUptime
                    guard now - logged >= 10 else { return }
                    logged = now
                    err.write(line + "\n")
                } : nil
                if let log {
                    evaluation = try await Evaluator.run(
                        log: log, options: options, registry: registry, outputDirectory: out,
                        protecting: ProtectedFiles(inputs: read), toolVersion: FetchCast.version, progress: progress)
                } else {
                    evaluation = try Evaluator.run(
                        .files(traces), options: options, registry: registry, outputDirectory: out,
                        protecting: ProtectedFiles(inputs: read), toolVersion: FetchCast.version, progress: progress)
                }
            } catch let error as EvaluationError {
                await log?.close()
                if showProgress { err.write("\r\u{1B}[2K") }
                throw FetchCast.fail(error.description)
            } catch let error as TraceError {
                await log?.close()
                throw FetchCast.fail(error.description)
            } catch {
                await log?.close()
                throw error
            }
            await log?.close()
            if showProgress { err.write("\r\u{1B}[2K") }
            guard !quiet else { return }
            for note in evaluation.notes { print("note: \(note)", to: &err) }
            // The columns are named as in summary.csv (docs/evaluation.md), one vocabulary.
            let extra = evaluation.usesConditions
                ? ["battery_joules_per_device_day", "cellular_fetches_per_device_day", "blocked_fetches", "deferred_fetches"] : []
            let header = ["policy", "budget", "devices", "device_days", "needy_launches", "hit_rate", "fresh_ratio", "fetches_per_device_day",
                          "wakeups_per_device_day", "joules_per_device_day", "mean_staleness_min"] + extra
            let rows = evaluation.summary.map { r -> [String] in
                let m = r.metrics
                let conditionValues = extra.isEmpty ? [] : [
                    CSVField.fixed(m.perDeviceDay(m.batteryJoules), decimals: 1),
                    CSVField.fixed(m.perDeviceDay(Double(m.cellularFetches)), decimals: 2), String(m.blockedFetches),
                    String(m.deferredFetches),
                ]
                return [r.policy, Self.budget(r.budget), String(m.devices), CSVField.fixed(m.deviceDays, decimals: 1),
                        String(m.needyLaunches), CSVField.fixed(m.hitRate, decimals: 3), CSVField.fixed(m.freshRatio, decimals: 3),
                        CSVField.fixed(m.perDeviceDay(Double(m.fetches)), decimals: 2),
                        CSVField.fixed(m.perDeviceDay(Double(m.wakeups)), decimals: 2),
                        CSVField.fixed(m.perDeviceDay(m.joules), decimals: 1), CSVField.fixed(m.meanStalenessMinutes, decimals: 1)]
                    + conditionValues
            }
            TextTable.write([header] + rows, rightAligned: Set(1..<header.count), to: &err)
            Self.writeSlices(evaluation.summary, to: &err)
            Self.writeDelivery(evaluation, to: &err)
            let deliveryFile = evaluation.delivery.isPush ? ", delivery.csv" : ""
            print("wrote \(out)/summary.csv, devices.csv, slices.csv, run.json" + deliveryFile + (detail ? ", launches.csv.gz, fetches.csv.gz, decisions.csv.gz, plans.csv.gz" : ""), to: &err)
        }

        /// The hit rate of each slice of `slices.csv` (docs/evaluation.md), as a second table
        /// whose header gives each slice's needy launches (the same for every policy).
        static func writeSlices(_ summary: [Evaluation.Row], to err: inout FileSink) {
            guard let first = summary.first else { return }
            let slices = SilenceSlices.Slice.allCases
            print("hit rate by the device's silence before the needy launch (slices.csv):", to: &err)
            let header = ["policy", "budget"] + slices.map { "\($0.name) (\(first.metrics.slices.needy[$0.rawValue]))" }
            let rows = summary.map { r in
                [r.policy, Self.budget(r.budget)] + slices.map { slice in
                    r.metrics.slices.needy[slice.rawValue] == 0 ? "" : CSVField.fixed(r.metrics.slices.hitRate(slice), decimals: 3)
                }
            }
            TextTable.write([header] + rows, rightAligned: Set(1..<header.count), to: &err)
        }

        /// Semantics d1: per push policy, pushes per device-day and the delivery delay
        /// (`delivery.csv`, in minutes here); nothing under `--delivery direct`.
        static func writeDelivery(_ evaluation: Evaluation, to err: inout FileSink) {
            guard evaluation.delivery.isPush else { return }
            let rows = evaluation.summary.filter { evaluation.pushedPolicies.contains($0.policy) }
            guard !rows.isEmpty else { return }
            print("pushes through \(evaluation.delivery.kind.rawValue) per device-day, and the delivery delay in minutes (delivery.csv):", to: &err)
            let header = ["policy", "budget", "sent", "delivered", "delayed", "at_open", "collapsed", "dropped", "delay_p50_min", "delay_p90_min"]
            let table = rows.map { r -> [String] in
                let m = r.metrics
                let p = m.push
                func perDay(_ n: Int) -> String { CSVField.fixed(m.perDeviceDay(Double(n)), decimals: 2) }
                func minutes(_ q: Double) -> String { p.delayQuantile(q).map { CSVField.fixed($0 / 60, decimals: 1) } ?? "" }
                return [r.policy, Self.budget(r.budget), perDay(p.sent), perDay(p.delivered), perDay(p.delayed), perDay(p.deliveredAtOpen),
                        perDay(p.collapsed), perDay(p.dropped), minutes(0.5), minutes(0.9)]
            }
            TextTable.write([header] + table, rightAligned: Set(1..<header.count), to: &err)
        }

        static func budget(_ b: Double) -> String {
            b == b.rounded() && abs(b) < 1e15 ? String(Int(b)) : CSVField.fixed(b, decimals: 3)
        }
    }
}

extension PlanningOptions.Visibility: ExpressibleByArgument {}
extension DeliveryOptions.Kind: ExpressibleByArgument {}

/// `evaluate --push-timing`.
enum PushTimingChoice: String, ExpressibleByArgument, CaseIterable {
    case sendAt = "send-at"
    case fetchAt = "fetch-at"
}
