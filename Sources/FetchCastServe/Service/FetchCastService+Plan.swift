import FetchCastModel
import FetchCastPredict
import FetchCastStore

/// One device's plan: from the plans kept ahead (in memory after a check, or in the store), else
/// planned from its model as `predict` does, with why it is empty when it is.
extension FetchCastService {
    /// The plan of one device: what `fetchcast predict --device D` prints for the same request.
    ///
    /// - Parameters:
    ///   - request: `device` must be set; `at == nil` plans from this service's clock (a live
    ///     backend asks about now, not about the device's last event).
    ///   - work: Where what blocks runs (``planWithNote(_:on:)``).
    /// - Throws: ``ServiceError/unknownDevice(_:)``, ``ServiceError/unknownApp(_:)``, or what
    ///   the store throws.
    package func plan(_ request: PredictionRequest, on work: some BlockingWork) async throws -> [Prediction] {
        try await answer(request, withNote: false, on: work).fetches
    }

    /// The plan of one device, as ``plan(_:on:)``, with why it is empty when it is
    /// (``EmptyPlanNote``: the device's silence and the rule that stops plans, or that nothing is
    /// pending and no habit falls in the horizon): what `GET /v1/devices/{device}/plan` answers.
    ///
    /// Where the plan comes from is decided here, once, for every caller (the plan route, the
    /// sweep's batches, the library): the device's plans kept ahead, from memory after a shared
    /// check (``PlansInMemory``) when this service keeps them there, else from the store, else
    /// planned from the device's model as `predict` does. A plan kept in memory waits for its
    /// check without holding a thread; the check and the reads of the store run where `work`
    /// runs them. A plan computed from the store gives its note from the same
    /// snapshot, so the note never describes a state a later ingest made; a plan kept ahead reads
    /// the device's model only when it is empty and its table keeps nothing its note reads.
    package func planWithNote(_ request: PredictionRequest, on work: some BlockingWork) async throws -> (fetches: [Prediction], note: String?) {
        try await answer(request, withNote: true, on: work)
    }

    /// ``plan(_:on:)``, and its empty-plan note when `withNote` and the plan is empty.
    private func answer(_ request: PredictionRequest, withNote: Bool, on work: some BlockingWork) async throws
        -> (fetches: [Prediction], note: String?)
    {
        var request = request
        if request.at == nil { request.at = now() }
        let asked = request
        guard let inMemory, let (name, start) = ModelRepository.keptAhead(request),
              let (planned, table) = try await keptInMemory([name], request: request, start: start, in: inMemory, on: work,
                                                            read: { try await self.readers.with($0) })[0]
        else {
            return try await work.read { try await self.computed(asked, withNote: withNote) }
        }
        answeredAhead.add(1, ordering: .relaxed)
        guard withNote, planned.isEmpty else { return (planned, nil) }
        if let note = noteFromTable(table, request: asked, start: start) { return (planned, note) }
        return (planned, try await work.read { try await self.noteReadingModel(asked, table: table, in: inMemory) })
    }

    /// The plans kept ahead of the devices `names` for `request` (a request tables keep, from
    /// `start`), from `inMemory` after one check begun after this call, or read from the store on
    /// a reader `read` lends (``ModelRepository/precomputedPlanKeeping(_:)``); `nil` for a device
    /// without one. The check and the reads run where `work` runs them.
    func keptInMemory(
        _ names: [String], request: PredictionRequest, start: Double, in inMemory: PlansInMemory, on work: some BlockingWork,
        read: @escaping @Sendable (_ body: (StoreConnection) async throws -> [(plan: [Prediction], table: KeptPlanTable)?]) async throws
            -> [(plan: [Prediction], table: KeptPlanTable)?]
    ) async throws -> [(plan: [Prediction], table: KeptPlanTable)?] {
        try await inMemory.keptPlans(
            devices: names, from: start, count: request.count,
            check: { last in try await work.check { try await self.checkChanges(last) } },
            read: { names in
                try await work.read {
                    try await read { reader in
                        var plans: [(plan: [Prediction], table: KeptPlanTable)?] = []
                        for name in names {
                            var one = request
                            one.device = name
                            plans.append(try await reader.repository.precomputedPlanKeeping(one))
                        }
                        return plans
                    }
                }
            })
    }

    /// The plan of `request` (its `at` set) from the store: kept ahead there (when this service
    /// keeps none in memory), else planned from the device's model, as `predict` does.
    private func computed(_ request: PredictionRequest, withNote: Bool) async throws -> (fetches: [Prediction], note: String?) {
        guard let device = request.device else { throw ServiceError.unknownDevice("") }
        return try await readers.with { reader in
            if inMemory == nil, let (planned, facts) = try await reader.repository.precomputedPlanNoting(request) {
                answeredAhead.add(1, ordering: .relaxed)
                guard withNote, planned.isEmpty else { return (planned, nil) }
                if let facts, facts.apply(from: request.at!) {
                    notedFromTables.add(1, ordering: .relaxed)
                    return (planned, sentence(request, facts))
                }
                return (planned, try await note(request, snapshot: try await reader.repository.refresh(devices: [device])))
            }
            let snapshot = try await reader.repository.refresh(devices: [device])
            try Self.check(request, in: snapshot)
            let planned = try await Predictor.predict(request, snapshot: snapshot)
            return (planned, withNote && planned.isEmpty ? try await note(request, snapshot: snapshot) : nil)
        }
    }

    /// The note of an empty plan `table` answered, from what the table keeps of the model it was
    /// planned from; `nil` when it keeps nothing that applies from `start`.
    private func noteFromTable(_ table: KeptPlanTable, request: PredictionRequest, start: Double) -> String? {
        guard let facts = table.note, facts.apply(from: start) else { return nil }
        notedFromTables.add(1, ordering: .relaxed)
        return sentence(request, facts)
    }

    /// The note of an empty plan `table` answered (a table saved without what its note reads,
    /// format 4), read from the device's model, and kept with the table.
    private func noteReadingModel(_ request: PredictionRequest, table: KeptPlanTable, in inMemory: PlansInMemory) async throws -> String {
        let device = request.device!
        return try await readers.with { reader in
            let snapshot = try await reader.repository.refresh(devices: [device])
            if let latest = snapshot.device(named: device).flatMap({ snapshot.models[$0] }) {
                inMemory.keepNote(EmptyPlanNote.Facts(latest), device: device, table: table)
            }
            return try await note(request, snapshot: snapshot)
        }
    }

    private func sentence(_ request: PredictionRequest, _ facts: EmptyPlanNote.Facts?) -> String {
        EmptyPlanNote.sentence(device: request.device!, horizonHours: request.horizon / 3600, facts: facts, from: request.at, budget: request.budget)
    }

    /// The note from the model the plan was made from: the device's events before the plan's start.
    private func note(_ request: PredictionRequest, snapshot: ModelRepository.Snapshot) async throws -> String {
        var model: DeviceModel?
        if let id = snapshot.device(named: request.device!) {
            model = snapshot.models[id]
            if let at = request.at, let before = try await snapshot.model(of: id, before: at) { model = before }
        }
        return sentence(request, model.map(EmptyPlanNote.Facts.init))
    }

    /// What changed in the store since its last event was `last` (``ModelRepository/changesSince(_:)``),
    /// on a connection of its own: plans waiting for the check hold no reader.
    func checkChanges(_ last: Int64) async throws -> ModelRepository.PlanChanges? {
        try await checker.with { try await $0.repository.changesSince(last) }
    }

    /// Plans kept ahead held in memory: how many tables, about how many bytes, plans answered
    /// from them and checks of the store (every count 0 when this service keeps none there).
    package var plansInMemory: (tables: Int, bytes: Int, answered: Int, checks: Int) {
        let counts = inMemory?.counts ?? PlansInMemory.Counts()
        return (counts.tables, counts.bytes, counts.answered, counts.checks)
    }
}
