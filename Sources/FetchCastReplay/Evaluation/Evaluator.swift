import FetchCastModel
import FetchCastStore
import FetchCastTrace
import Foundation

/// `fetchcast evaluate`: the causal trace replay of the v1 semantics (docs/evaluation.md).
///
/// Pass 1 reads every input once (``TraceScan``): it checks each device's time order, picks the
/// fetch-enabled apps, and spools the events. Pass 2 replays each device on its own thread,
/// every (policy, budget) at once, from the spool (``DeviceRunner``). Totals are summed in
/// device-name order, so outputs are byte-identical whatever the thread count.
public enum Evaluator {
    /// The semantics version written to `run.json`.
    public static let semanticsVersion = "v1"

    /// Runs an evaluation and, when `outputDirectory` is given, writes `summary.csv`,
    /// `devices.csv`, `run.json` and (with `options.detail`) the detail files there.
    ///
    /// - Parameters:
    ///   - input: Trace files, a store, or events in memory.
    ///   - options: The parameters.
    ///   - registry: The policies by name.
    ///   - outputDirectory: Where to write (created if missing; outputs there are replaced, each
    ///     only once it is written whole).
    ///   - protected: Files the outputs may not replace besides `input`'s own files or store and
    ///     the prior's traces (which are always protected): the device lists, profiles and
    ///     constraints the caller read.
    ///   - toolVersion: Recorded in `run.json`.
    ///   - progress: Called with short progress lines (from the calling thread): while reading,
    ///     every million events; while replaying, every half second, with the share done and an
    ///     estimate of the time left.
    /// - Returns: The summary and per-device rows.
    /// - Throws: ``EvaluationError``.
    /// - Complexity: O(events × (policies × budgets) / threads) time; memory O(devices × apps ×
    ///   policies × budgets), independent of the trace's length.
    public static func run(
        _ input: EvaluationInput, options: EvaluationOptions, registry: PolicyRegistry = .standard,
        outputDirectory: String? = nil, protecting protected: ProtectedFiles = ProtectedFiles(), toolVersion: String = "",
        progress: ((String) -> Void)? = nil
    ) throws(EvaluationError) -> Evaluation {
        var protected = protected
        switch input {
        case .files(let paths): protected.add(inputs: paths)
        case .store(let store): protected.add(store: store.path)
        case .events: break
        }
        let (plans, fresh) = try begin(options: options, registry: registry, outputDirectory: outputDirectory, protecting: protected)
        var scanner = fresh
        try scanner.read(input, progress: progress)
        return try complete(
            scanner.finish(), plans: plans, options: options, outputDirectory: outputDirectory, protecting: protected,
            toolVersion: toolVersion, progress: progress)
    }

    /// Runs an evaluation of every event of an event log, on any engine, as
    /// ``run(_:options:registry:outputDirectory:protecting:toolVersion:progress:)`` runs one of
    /// ``EvaluationInput/store(_:)``: the same events in the same order, so the same outputs.
    ///
    /// An SQLite store's files are protected from the outputs; a PostgreSQL database has none.
    /// - Parameters: As for ``run(_:options:registry:outputDirectory:protecting:toolVersion:progress:)``,
    ///   `log` in place of the input.
    /// - Returns: The summary and per-device rows.
    /// - Throws: ``EvaluationError`` (``EvaluationError/store(_:)`` when the log cannot be read).
    /// - Complexity: As for a store: O(events × (policies × budgets) / threads) time; memory
    ///   O(devices × apps × policies × budgets), independent of the number of events.
    package static func run(
        log: any EventLogScanner, options: EvaluationOptions, registry: PolicyRegistry = .standard,
        outputDirectory: String? = nil, protecting protected: ProtectedFiles = ProtectedFiles(), toolVersion: String = "",
        progress: ((String) -> Void)? = nil
    ) async throws(EvaluationError) -> Evaluation {
        var protected = protected
        if let store = log as? Store { protected.add(store: store.path) }
        let (plans, fresh) = try begin(options: options, registry: registry, outputDirectory: outputDirectory, protecting: protected)
        var scanner = fresh
        try await scanner.readLog(log)
        return try complete(
            scanner.finish(), plans: plans, options: options, outputDirectory: outputDirectory, protecting: protected,
            toolVersion: toolVersion, progress: progress)
    }

    /// Runs an evaluation of every event of the store at `location`, on either engine: what
    /// ``run(_:options:registry:outputDirectory:protecting:toolVersion:progress:)`` gives for
    /// ``EvaluationInput/store(_:)`` of the same events (`fetchcast evaluate` without a trace).
    /// An SQLite store's files are protected from the outputs.
    /// - Parameters: As for ``run(_:options:registry:outputDirectory:protecting:toolVersion:progress:)``,
    ///   `location` in place of the input.
    /// - Returns: The summary and per-device rows.
    /// - Throws: ``EvaluationError`` (``EvaluationError/store(_:)`` when the store cannot be
    ///   opened or read).
    public static func run(
        store location: StoreLocation, options: EvaluationOptions, registry: PolicyRegistry = .standard,
        outputDirectory: String? = nil, protecting protected: ProtectedFiles = ProtectedFiles(), toolVersion: String = "",
        progress: ((String) -> Void)? = nil
    ) async throws(EvaluationError) -> Evaluation {
        let log: any EventLogScanner
        do {
            log = try await location.openLog(false)
        } catch {
            throw .store("\(error)")
        }
        let result: Result<Evaluation, EvaluationError>
        do {
            result = .success(try await run(
                log: log, options: options, registry: registry, outputDirectory: outputDirectory, protecting: protected,
                toolVersion: toolVersion, progress: progress))
        } catch {
            result = .failure(error)
        }
        await log.close()
        return try result.get()
    }

    /// Before reading the input: refuses outputs that would replace a protected file (before
    /// the replay, not after it), and makes the plans and the pass-1 scanner.
    private static func begin(
        options: EvaluationOptions, registry: PolicyRegistry, outputDirectory: String?, protecting protected: ProtectedFiles
    ) throws(EvaluationError) -> (plans: [ReplayPlan], scanner: TraceScan) {
        var protected = protected
        if let prior = options.prior { protected.add(inputs: prior.traces) }
        if let outputDirectory { try OutputFiles.check(directory: outputDirectory, protecting: protected) }
        let plans = try plans(options: options, registry: registry)
        return (plans, try TraceScan(options: options))
    }

    /// After reading the input: replays it and writes the outputs.
    private static func complete(
        _ scan: ScanResult, plans: [ReplayPlan], options: EvaluationOptions, outputDirectory: String?,
        protecting protected: ProtectedFiles, toolVersion: String, progress: ((String) -> Void)?
    ) throws(EvaluationError) -> Evaluation {
        var protected = protected
        if let prior = options.prior { protected.add(inputs: prior.traces) }
        var detail: DetailFiles?
        if let outputDirectory {
            try OutputFiles.prepare(directory: outputDirectory)
            if options.detail {
                detail = try DetailFiles(directory: options.temporaryDirectory, plans: plans, scan: scan, options: options)
            }
        }
        let outcome = replay(scan: scan, plans: plans, options: options, progress: progress) { plan, device in
            detail?.recorder(plan: plan, device: device)
        }
        var evaluation = try outcome.get()
        evaluation.notes = notes(plans: plans)
        if let outputDirectory {
            try OutputFiles.write(evaluation, options: options, toolVersion: toolVersion, to: outputDirectory, protecting: protected)
            if !options.delivery.isPush { OutputFiles.removeStaleDelivery(directory: outputDirectory) }
            if let detail {
                try detail.assemble(into: outputDirectory, protecting: protected)
            } else {
                OutputFiles.removeStaleDetail(directory: outputDirectory)
            }
        }
        return evaluation
    }

    /// Runs an evaluation in memory, optionally keeping every detail record (tests).
    package static func evaluate(
        _ input: EvaluationInput, options: EvaluationOptions, registry: PolicyRegistry = .standard,
        collectDetail: Bool = false
    ) throws(EvaluationError) -> Evaluation {
        let plans = try plans(options: options, registry: registry)
        var scanner = try TraceScan(options: options)
        try scanner.read(input, progress: nil)
        let scan = scanner.finish()
        let recorders = (0..<plans.count).map { _ in (0..<scan.devices.count).map { _ in MemoryRecorder() } }
        let box = Handoff(recorders)
        var evaluation = try replay(scan: scan, plans: plans, options: options) { plan, device in
            collectDetail ? box.value[plan][device] : nil
        }.get()
        evaluation.notes = notes(plans: plans)
        if collectDetail {
            evaluation.launchRecords = recorders.map { $0.flatMap(\.launches) }
            evaluation.fetchRecords = recorders.map { $0.flatMap(\.fetches) }
            evaluation.decisionRecords = recorders.map { $0.flatMap(\.decisions) }
            evaluation.planRecords = recorders.map { $0.flatMap(\.plans) }
            evaluation.deliveryRecords = recorders.map { $0.flatMap(\.deliveries) }
        }
        return evaluation
    }

    static func plans(options: EvaluationOptions, registry: PolicyRegistry) throws(EvaluationError) -> [ReplayPlan] {
        var plans: [ReplayPlan] = []
        var seen = Set<String>()
        for name in options.policies where seen.insert(name).inserted {
            guard let entry = registry[name] else { throw .unknownPolicy(name, known: registry.names) }
            for budget in entry.fixedBudget.map({ [$0] }) ?? options.budgets {
                plans.append(ReplayPlan(policy: name, budget: budget, entry: entry))
            }
        }
        return plans
    }

    private static func notes(plans: [ReplayPlan]) -> [String] {
        var out: [String] = []
        for p in plans { if let n = p.entry.note, !out.contains(n) { out.append(n) } }
        return out
    }

    private static func replay(
        scan: ScanResult, plans: [ReplayPlan], options: EvaluationOptions, progress: ((String) -> Void)? = nil,
        recorder: @escaping (Int, Int) -> ReplayRecorder?
    ) -> Result<Evaluation, EvaluationError> {
        let threads = options.threads > 0 ? options.threads : ProcessInfo.processInfo.activeProcessorCount
        // Longest devices first, for balance; results are indexed by device, so order is free.
        let order = scan.devices.indices.sorted {
            scan.devices[$0].launches != scan.devices[$1].launches
                ? scan.devices[$0].launches > scan.devices[$1].launches : $0 < $1
        }
        let counter = progress.map { _ in
            let global = scan.globalStream.map { scan.spool.count(of: $0) } ?? 0
            let total = scan.devices.reduce(0) { $0 + scan.spool.count(of: $1.stream) + global }
            return ReplayProgress(total: total, started: ProcessInfo.processInfo.systemUptime)
        }
        let report = progress.flatMap { progress in
            counter.map { counter in
                {
                    progress(counter.line(devices: scan.devices.count, runs: plans.count, now: ProcessInfo.processInfo.systemUptime))
                }
            }
        }
        report?()
        let shared = Handoff((scan, plans, options, recorder))
        let outcomes = DevicePool.map(count: scan.devices.count, order: order, threads: threads, report: report) { d in
            let (scan, plans, options, recorder) = shared.value
            return Handoff(DeviceRunner.replay(
                deviceIndex: d, scan: scan, plans: plans, options: options,
                recorders: plans.indices.map { recorder($0, d) }, progress: counter))
        }.map(\.value)
        if let error = outcomes.lazy.compactMap(\.error).first { return .failure(error) }
        var summary: [Evaluation.Row] = []
        var devices: [Evaluation.Row] = []
        for (p, plan) in plans.enumerated() {
            var total = DeviceMetrics()
            for (d, device) in scan.devices.enumerated() {
                let m = outcomes[d].metrics[p]
                total.add(m)
                devices.append(Evaluation.Row(policy: plan.policy, budget: plan.budget, device: device.name, metrics: m))
            }
            summary.append(Evaluation.Row(policy: plan.policy, budget: plan.budget, device: nil, metrics: total))
        }
        var evaluation = Evaluation(
            summary: summary, devices: devices, inputs: scan.inputs, eventsReplayed: scan.eventsKept, notes: [])
        evaluation.appNames = scan.appNames
        evaluation.usesConditions = scan.stateRows > 0 || !options.constraints.isEmpty
        evaluation.bytesKnown = scan.appMeanBytes.contains { $0 != nil }
        evaluation.deviceNames = scan.devices.map(\.name)
        evaluation.delivery = options.delivery
        if options.delivery.isPush {
            for p in plans where p.entry.sendsPushes && !evaluation.pushedPolicies.contains(p.policy) {
                evaluation.pushedPolicies.append(p.policy)
            }
        }
        return .success(evaluation)
    }
}
