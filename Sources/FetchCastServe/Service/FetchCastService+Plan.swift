import FetchCastModel
import FetchCastPredict
import FetchCastStore

/// One device's plan: from the plans kept ahead (in memory after a check, or in the store), else
/// planned from its model as `predict` does, with why it is empty when it is.
extension FetchCastService {
    /// The plan of one device: what `fetchcast predict --device D` prints for the same request.
    ///
    /// - Parameter request: `device` must be set; `at == nil` plans from this service's clock
    ///   (a live backend asks about now, not about the device's last event).
    /// - Throws: ``ServiceError/unknownDevice(_:)``, ``ServiceError/unknownApp(_:)``, or what
    ///   the store throws.
    package func plan(_ request: PredictionRequest) throws -> [Prediction] {
        try answer(request, withNote: false).fetches
    }

    /// The plan of one device, as ``plan(_:)``, with why it is empty when it is
    /// (``EmptyPlanNote``: the device's silence and the rule that stops plans, or that nothing is
    /// pending and no habit falls in the horizon): what `GET /v1/devices/{device}/plan` answers.
    /// A plan computed from the store gives its note from the same snapshot, so the note never
    /// describes a state a later ingest made; a plan kept ahead reads the device's last event
    /// once more, only when it is empty.
    package func planWithNote(_ request: PredictionRequest) throws -> (fetches: [Prediction], note: String?) {
        try answer(request, withNote: true)
    }

    /// ``planWithNote(_:)`` asked from a task (`GET /v1/devices/{device}/plan`): a plan kept in
    /// memory waits for its check without holding a thread (``PlansInMemory``), and only what
    /// blocks runs on `work`'s threads (the check, and a read from the store). The same answer,
    /// from the same code, as ``planWithNote(_:)``.
    package func planWithNote(_ request: PredictionRequest, on work: some BlockingWork) async throws -> (fetches: [Prediction], note: String?) {
        var request = request
        if request.at == nil { request.at = now() }
        let asked = request
        guard let inMemory, let (name, start) = ModelRepository.keptAhead(request) else {
            return try await work.read { try self.planWithNote(asked) }
        }
        guard let (planned, table) = try await inMemory.keptPlan(
            device: name, from: start, count: request.count,
            check: { last in try await work.check { try self.checkChanges(last) } },
            read: { try await work.read { try self.withReader { try $0.repository.precomputedPlanKeeping(asked) } } })
        else {
            return try await work.read { try self.computed(asked, withNote: true) }
        }
        answeredAhead.add(1, ordering: .relaxed)
        guard planned.isEmpty else { return (planned, nil) }
        if let note = noteFromTable(table, request: asked, start: start) { return (planned, note) }
        return (planned, try await work.read { try self.noteReadingModel(asked, table: table, in: inMemory) })
    }

    /// ``plan(_:)``, and its empty-plan note when `withNote` and the plan is empty.
    private func answer(_ request: PredictionRequest, withNote: Bool) throws -> (fetches: [Prediction], note: String?) {
        var request = request
        if request.at == nil { request.at = now() }
        // The device's plans kept ahead by the warm-up, while they are exactly these: from
        // memory after a check of the store, without a reader, when this service keeps them there.
        if let inMemory, let (name, start) = ModelRepository.keptAhead(request), let (planned, table) = try inMemory.keptPlan(
            device: name, from: start, count: request.count, check: checkChanges,
            read: { try self.withReader { try $0.repository.precomputedPlanKeeping(request) } })
        {
            answeredAhead.add(1, ordering: .relaxed)
            guard withNote, planned.isEmpty else { return (planned, nil) }
            if let note = noteFromTable(table, request: request, start: start) { return (planned, note) }
            return (planned, try noteReadingModel(request, table: table, in: inMemory))
        }
        return try computed(request, withNote: withNote)
    }

    /// The plan of `request` (its `at` set) from the store: kept ahead there (when this service
    /// keeps none in memory), else planned from the device's model, as `predict` does.
    private func computed(_ request: PredictionRequest, withNote: Bool) throws -> (fetches: [Prediction], note: String?) {
        guard let device = request.device else { throw ServiceError.unknownDevice("") }
        return try withReader { reader in
            if inMemory == nil, let (planned, facts) = try reader.repository.precomputedPlanNoting(request) {
                answeredAhead.add(1, ordering: .relaxed)
                guard withNote, planned.isEmpty else { return (planned, nil) }
                if let facts, facts.apply(from: request.at!) {
                    notedFromTables.add(1, ordering: .relaxed)
                    return (planned, sentence(request, facts))
                }
                return (planned, try note(request, snapshot: try reader.repository.refresh(devices: [device])))
            }
            let snapshot = try reader.repository.refresh(devices: [device])
            try Self.check(request, in: snapshot)
            let planned = try Predictor.predict(request, snapshot: snapshot)
            return (planned, withNote && planned.isEmpty ? try note(request, snapshot: snapshot) : nil)
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
    private func noteReadingModel(_ request: PredictionRequest, table: KeptPlanTable, in inMemory: PlansInMemory) throws -> String {
        let device = request.device!
        return try withReader { reader in
            let snapshot = try reader.repository.refresh(devices: [device])
            if let latest = snapshot.device(named: device).flatMap({ snapshot.models[$0] }) {
                inMemory.keepNote(EmptyPlanNote.Facts(latest), device: device, table: table)
            }
            return try note(request, snapshot: snapshot)
        }
    }

    private func sentence(_ request: PredictionRequest, _ facts: EmptyPlanNote.Facts?) -> String {
        EmptyPlanNote.sentence(device: request.device!, horizonHours: request.horizon / 3600, facts: facts, from: request.at, budget: request.budget)
    }

    /// The note from the model the plan was made from: the device's events before the plan's start.
    private func note(_ request: PredictionRequest, snapshot: ModelRepository.Snapshot) throws -> String {
        let id = snapshot.device(named: request.device!)
        let model = try id.flatMap { id in try request.at.flatMap { try snapshot.model(of: id, before: $0) } ?? snapshot.models[id] }
        return sentence(request, model.map(EmptyPlanNote.Facts.init))
    }

    /// What changed in the store since its last event was `last` (``ModelRepository/changesSince(_:)``),
    /// on a connection of its own: plans waiting for the check hold no reader.
    func checkChanges(_ last: Int64) throws -> ModelRepository.PlanChanges? {
        try checker.withLock { checker in
            if checker == nil { checker = Checker(store: try storage.open(false)) }
            return try checker!.repository.changesSince(last)
        }
    }

    /// Plans kept ahead held in memory: how many tables, about how many bytes, plans answered
    /// from them and checks of the store (every count 0 when this service keeps none there).
    package var plansInMemory: (tables: Int, bytes: Int, answered: Int, checks: Int) {
        let counts = inMemory?.counts ?? PlansInMemory.Counts()
        return (counts.tables, counts.bytes, counts.answered, counts.checks)
    }
}
