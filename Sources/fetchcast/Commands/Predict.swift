import FetchCastCore
import Foundation
import ArgumentParser
import FetchCastModel
import FetchCastPredict
import FetchCastStore
import FetchCastTrace

extension FetchCast {
    struct Predict: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "predict",
            abstract: "When should a device fetch for an app next? Plans the next fetch times from the store.",
            discussion: """
                Folds events ingested since the last call into the learned model (kept in the \
                store), then plans each device's next fetches over the following --horizon hours \
                (24 by default): what the live scheduler (evaluate's `learned`) would fetch if no further event came, \
                at most --budget a local day, at least 15 min apart per app, not before --at or \
                --not-before, skipping hours when new content is unlikely, and coalescing nearby \
                fetches. Besides reacting to the device's last events it looks ahead of each app's \
                habits (a window of the day that held a session on most recent days of its kind), \
                so a plan asked hours after the last event lists the fetches ahead of them; it is \
                empty when nothing is pending and no habit falls in the horizon. \
                launch_probability is the chance that a session of the app (a launch after more \
                than 30 min without one) starts within 30 min after fetch_at.
                """)

        @OptionGroup var store: StoreOptions

        @Option(help: "Only this device (default: every device).")
        var device: String?

        @Option(help: "Only this app; repeat it to plan several apps together under one daily cap (default: the device's 5 apps with the most sessions).")
        var app: [String] = []

        @Option(parsing: .unconditional, help: ArgumentHelp("Plan from this time, from the events before it: `now` (the clock: what a live backend asks), ISO 8601, YYYY-MM-DD or Unix seconds (default: the device's last event, since traces are history).", valueName: "time"))
        var at: String?

        @Option(parsing: .unconditional, help: ArgumentHelp("No fetch before this time, like BGAppRefreshTaskRequest.earliestBeginDate (same formats as --at); the plan covers the 24 hours from it.", valueName: "time"))
        var notBefore: String?

        @Option(parsing: .unconditional, help: "Fetches to list per device, 1 to 1000; a note on stderr says how many more the plan holds.")
        var count: Int = 10

        @Option(parsing: .unconditional, help: ArgumentHelp("How far ahead to plan, hours from --at (or --not-before when later), 1 to 168: a plan lists the fetches ahead of the device's habits in that time too.", valueName: "hours"))
        var horizon: Double = 24

        @Option(parsing: .unconditional, help: "Fetches per device per day, 1 to 1440 (the cap is its whole part).")
        var budget: Double = 24

        @Option(help: "Output format: table, json (JSON Lines) or csv.")
        var format: TabularFormat = .table

        @OptionGroup var conditions: ConstraintOptions

        @OptionGroup(title: "Push delivery") var push: PushDeliveryOptions

        func validate() throws {
            if let at, at != "now", Timestamp.parseArgument(at) == nil {
                throw ValidationError("--at '\(at)' is not a time; use ISO 8601 (2013-11-20T08:00:00+01:00), a date or Unix seconds.")
            }
            if let notBefore, Timestamp.parseArgument(notBefore) == nil {
                throw ValidationError("--not-before '\(notBefore)' is not a time; use ISO 8601 (2013-11-20T08:00:00+01:00), a date or Unix seconds.")
            }
            try Limits.count.validate(count, flag: "--count")
            try Limits.budget.validate(budget, flag: "--budget")
            try Limits.horizonHours.validate(horizon, flag: "--horizon")
        }

        func run() async throws {
            try await store.withModelStore(.readSavingWhenWritable) { try await run(on: $0) }
        }

        private func run(on s: any ModelStore) async throws {
            let constraints = try conditions.load()
            var predictions: [Prediction] = []
            // The named device's model, for the note of an empty plan.
            var deviceModel: DeviceModel?
            let start = at == "now" ? Date().timeIntervalSince1970 : at.flatMap(Timestamp.parseArgument)
            do {
                // Planned up to the most --count takes, then cut to --count per device below, so
                // that the note can say how many were left out.
                var request = PredictionRequest(
                    device: device, at: start,
                    notBefore: notBefore.flatMap(Timestamp.parseArgument), count: Limits.count.bounds.upperBound, budget: budget)
                request.horizon = horizon * 3600
                request.apps = app
                request.constraints = constraints
                request.delivery = push.options
                // Every device: a batch of devices' state at a time (in name order), not all at once.
                var noted = false
                let repository = ModelRepository(modelStore: s)
                var unsaved: StoreError?
                defer { if let unsaved { FetchCast.warnUnsaved(unsaved) } }
                try await repository.forEachBatch(device: device) { snapshot in
                    if unsaved == nil { unsaved = repository.saveFailure }
                    if snapshot.deviceNames.isEmpty && !noted {
                        var err = FileSink.standardError()
                        print("note: \(store.displayName) has no devices yet; ingest a trace first (fetchcast ingest FILE)", to: &err)
                        noted = true
                    }
                    let planned = try await Predictor.predict(request, snapshot: snapshot)
                    predictions += planned
                    if let device, planned.isEmpty, let id = snapshot.device(named: device), let model = snapshot.models[id] {
                        // The note speaks of the model the plan was made from: the events before --at.
                        deviceModel = model
                        if let start, let before = try await snapshot.model(of: id, before: start) { deviceModel = before }
                    }
                }
            } catch {
                throw FetchCast.fail("\(error)")
            }
            let (shown, leftOut) = Self.cut(predictions, to: count)
            predictions = shown
            if !leftOut.isEmpty {
                var err = FileSink.standardError()
                let fetches = leftOut.reduce(0) { $0 + $1.fetches }
                let devices = leftOut.count == 1 ? leftOut[0].device : Plural.count(leftOut.count, "device")
                print("note: \(Plural.count(fetches, "more fetch", plural: "more fetches")) of \(devices) in the next \(Plural.count(Int(horizon.rounded(.up)), "hour")) not shown (--count \(count) a device); raise --count to see them", to: &err)
            }
            if let device, predictions.isEmpty {
                var err = FileSink.standardError()
                print("note: " + EmptyPlanNote.sentence(device: device, horizonHours: horizon, model: deviceModel, from: start, budget: budget), to: &err)
            }
            var out = FileSink.standardOutput()
            let pushed = push.delivery != .direct
            switch format {
            case .json:
                for p in predictions { print(JSON.encode(p), to: &out) }
            case .csv:
                out.write(pushed ? "device,app,send_at,fetch_at,pushes_left_this_hour,launch_probability,new_data_probability,reason\n"
                                 : "device,app,fetch_at,launch_probability,new_data_probability,reason\n")
                for p in predictions {
                    let push = pushed ? [p.sendAt ?? "", p.fetchAt, String(p.pushesLeftThisHour ?? 0)] : [p.fetchAt]
                    out.write(CSVField.line([p.device, p.app] + push + [CSVField.fixed(p.launchProbability, decimals: 6),
                                             CSVField.fixed(p.newDataProbability, decimals: 6), p.reason]))
                }
            case .table:
                let head = pushed ? ["device", "app", "send_at", "fetch_at", "pushes_left_this_hour"] : ["device", "app", "fetch_at"]
                let rows = [head + ["launch_probability", "new_data_probability", "reason"]] + predictions.map {
                    let push = pushed ? [$0.sendAt ?? "", $0.fetchAt, String($0.pushesLeftThisHour ?? 0)] : [$0.fetchAt]
                    return [$0.device, $0.app] + push + [CSVField.fixed($0.launchProbability, decimals: 2),
                                                         CSVField.fixed($0.newDataProbability, decimals: 2), $0.reason]
                }
                TextTable.write(rows, rightAligned: pushed ? [4, 5, 6] : [3, 4], to: &out)
            }
            try FetchCast.finish(out)
        }
    }
}

extension FetchCast.Predict {
    /// The first `count` predictions of each device (they come grouped by device, in plan
    /// order), and how many each device had beyond them.
    static func cut(_ predictions: [Prediction], to count: Int) -> (shown: [Prediction], leftOut: [(device: String, fetches: Int)]) {
        var shown: [Prediction] = []
        var leftOut: [(device: String, fetches: Int)] = []
        var current: String?
        var seen = 0
        for p in predictions {
            if p.device != current { current = p.device; seen = 0 }
            seen += 1
            if seen <= count {
                shown.append(p)
            } else if leftOut.last?.device == p.device {
                leftOut[leftOut.count - 1].fetches += 1
            } else {
                leftOut.append((p.device, 1))
            }
        }
        return (shown, leftOut)
    }
}

enum TabularFormat: String, ExpressibleByArgument, CaseIterable {
    case table, json, csv
}
