import FetchCastCore
import FetchCastModel
import FetchCastPredict
import FetchCastStore
import FetchCastTrace
import Synchronization

/// The store, the model and the planner behind one long-running process: ingest a batch, plan
/// a device, plan every device in a window, list devices, show a device's model.
///
/// It knows nothing of HTTP (`fetchcast serve` is one transport over it), nor of the engine:
/// it opens its connections through a ``ServiceStorage`` (an SQLite file, or a PostgreSQL
/// database that several services may share). Every method is asynchronous: on PostgreSQL a
/// round trip suspends the calling task, and on SQLite a read runs on the thread the task is on
/// (a server runs them on its pools' threads, ``BlockingPools``, not on the event loops).
///
/// Plans come from exactly the code `fetchcast predict` runs (``ModelRepository`` and
/// ``Predictor/predict(_:snapshot:)``), ingests from the code `fetchcast ingest` runs
/// (``Ingestor``), so what is served is what is measured.
///
/// Concurrency: one writer connection, serialized, with `PRAGMA synchronous=FULL` so that a
/// committed ingest survives power loss; any number of reader connections (a pool: one per
/// task that plans at a time, ``StoreConnections``), each with its own ``ModelRepository``. The store is in WAL
/// mode, so readers see the last committed snapshot and never wait for an ingest in progress.
/// The writer folds new events into the saved model (``foldPending()``, right after an ingest;
/// only the devices with new events are folded, see ``ModelRepository``). Readers never fold
/// for the fleet and never take the write lock: a plan asked after an ingest committed but
/// before its fold was saved folds its own device's new events in memory (read-your-writes),
/// with the prior of the other devices as of the last saved fold. Only a store with no saved
/// fold at all (never folded) makes the first reader fold it, under the write lock.
package final class FetchCastService: Sendable {
    /// Where the store is (a path, or a URL without its password).
    package let path: String
    /// How connections to the store are opened.
    let storage: ServiceStorage
    /// The writer's connection: ingests and folds, one at a time.
    private let writer: StoreConnections
    /// The readers' connections, at most ``ServiceStorage/maxReaders`` in use.
    let readers: StoreConnections
    /// Decoded device state shared by the readers, for the current saved fold.
    private let cache = ModelCache()
    /// Caught-up schedulers shared by the readers (a device planned again, or after its own new
    /// events, goes on from the last one).
    private let schedulers = SchedulerCache(capacityBytes: 32 << 20)
    let now: @Sendable () -> Double
    /// Plans answered from a device's plans kept ahead (``ModelRepository/precomputedPlan(_:)``).
    let answeredAhead = Atomic<Int>(0)
    /// Empty plans kept ahead noted from what their table keeps (``KeptPlanTable/note``).
    let notedFromTables = Atomic<Int>(0)
    /// Plans kept ahead in memory too (a store a round trip away), or `nil`.
    let inMemory: PlansInMemory?
    /// The connection the checks of the plans in memory run on (opened on first use; one check
    /// at a time): plans waiting for a check hold no reader.
    let checker: StoreConnections
    /// The warm-up's connection (opened on first use), apart from the writer's so that an
    /// ingest never waits for a warm-up, and from the readers' so that plans never do.
    private let warmer: StoreConnections

    /// Opens (creating when missing) the SQLite store at `path`.
    /// - Parameters:
    ///   - path: The store file.
    ///   - now: The clock (Unix seconds) for plans asked without `at` and for ingest times.
    /// - Throws: ``StoreError`` when the store cannot be opened.
    package convenience init(path: String, now: @escaping @Sendable () -> Double = WallClock.now) async throws {
        try await self.init(storage: .sqlite(path: path), now: now)
    }

    /// Opens the store `storage` names (on either engine): its writer's connection now, the
    /// others as they are needed.
    /// - Throws: ``StoreError`` when the store cannot be opened.
    package init(storage: ServiceStorage, now: @escaping @Sendable () -> Double = WallClock.now) async throws {
        self.path = storage.location
        self.storage = storage
        self.now = now
        let store = try await storage.open(true)
        writer = StoreConnections(limit: 1, opened: StoreConnection(store: store, repository: ModelRepository(modelStore: store))) {
            let store = try await storage.open(true)
            return StoreConnection(store: store, repository: ModelRepository(modelStore: store))
        }
        inMemory = storage.plansInMemoryBytes > 0 ? PlansInMemory(capacityBytes: storage.plansInMemoryBytes) : nil
        let (cache, schedulers) = (cache, schedulers)
        readers = StoreConnections(limit: storage.maxReaders) {
            let store = try await storage.open(false)
            let repository = ModelRepository(modelStore: store)
            repository.savesFolds = false  // the writer folds; a reader brings its devices up to date in memory
            repository.savesSchedulers = false  // the warm-up saves them, off the request path
            repository.cache = cache
            repository.schedulerCache = schedulers
            return StoreConnection(store: store, repository: repository)
        }
        checker = StoreConnections(limit: 1) {
            let store = try await storage.open(false)
            return StoreConnection(store: store, repository: ModelRepository(modelStore: store))
        }
        warmer = StoreConnections(limit: 1) {
            // Reads like a reader, saves caught-up schedulers (at the CLI's durability: they are
            // derived, and rebuilt when lost).
            let store = try await storage.open(false)
            let repository = ModelRepository(modelStore: store)
            repository.savesFolds = false  // the writer folds
            repository.cache = cache
            // Its schedulers go to the store, not to the readers' memory.
            repository.schedulerCache = SchedulerCache(capacityBytes: 0)
            return StoreConnection(store: store, repository: repository)
        }
    }

    // MARK: Ingest

    /// What an ingest did.
    package struct IngestOutcome: Sendable, Hashable, Codable {
        /// Events added (0 for a duplicate).
        package var events: Int64
        /// Whether these exact bytes had been ingested before (nothing was added).
        package var duplicate: Bool
        /// Events of the body the store already held, not added (0 when they are kept, and for
        /// a duplicate).
        package var duplicates: Int64
        /// SHA-256 of the bytes: the file's key in the store.
        package var file: String
    }

    /// Ingests a trace file (CSV or JSON Lines, gzip or plain) in one durable transaction, the
    /// way `fetchcast ingest` does; bytes ingested before add nothing, and rows whose events the
    /// store already holds are skipped and counted unless `keepDuplicates`.
    /// A body without a row (a header only) adds nothing: no event and no file record (a body
    /// whose every event was already stored is recorded, so its bytes again are known at once).
    /// - Parameters:
    ///   - file: The trace on disk.
    ///   - name: The name the store records for it (`fetchcast files` lists it).
    ///   - trace: How it is read, with its limits (decompressed bytes, rows): beyond them the
    ///     ingest throws ``TraceError`` and stores nothing.
    ///   - keepDuplicates: Add rows whose events the store already holds (as before they were skipped).
    /// - Throws: ``TraceError`` for bad input, with `file` set to `name` (nothing is stored);
    ///   ``StoreError`` when the store fails.
    /// - Complexity: O(rows); ingests run one at a time.
    package func ingest(
        file: String, name: String, trace: TraceOptions = TraceOptions(), keepDuplicates: Bool = false
    ) async throws -> IngestOutcome {
        let now = self.now
        return try await writer.with { writer in
            // Never start an ingest while the model is behind (see the type's discussion).
            _ = try await writer.repository.refresh(devices: [])
            var options = IngestOptions(trace: trace, now: now)
            options.recordsEmptyFiles = false
            options.keepsDuplicates = keepDuplicates
            do {
                let result = try await writer.store.ingest(path: file, name: name, options: options)
                return IngestOutcome(events: result.events, duplicate: result.status == .alreadyIngested,
                                     duplicates: result.duplicates, file: result.sha256)
            } catch var error as TraceError {
                error.file = name
                throw error
            }
        }
    }

    /// Folds the events ingested since the last fold into the model, on the writer connection;
    /// call it after an ingest, off the request's path. Does nothing when the model is current.
    /// - Complexity: O(new events + devices × apps) when there are new events.
    package func foldPending() async throws {
        try await writer.with { writer in _ = try await writer.repository.refresh(devices: []) }
    }

    /// Saves, for every device whose saved scheduler is missing or behind its events, the
    /// scheduler a plan with default parameters starts from, caught up as of the device's last
    /// event (``ModelRepository/keepSchedulersCurrent(request:batchSize:shouldStop:)``): a first
    /// plan of the device then restores one row instead of replaying its history. Call it after
    /// ``foldPending()`` and once at start, off the request path; answers do not change, only
    /// their cost. Runs one at a time, on a connection of its own.
    /// - Parameter shouldStop: Asked between devices (a shutdown); `true` ends the pass early.
    /// - Complexity: every device after a new prior epoch (each one's history replayed), else the
    ///   devices with events since the last complete pass.
    @discardableResult
    package func keepSchedulersCurrent(shouldStop: @escaping @Sendable () -> Bool = { false }) async throws -> ModelRepository.WarmOutcome {
        try await warmer.with { warmer in try await warmer.repository.keepSchedulersCurrent(shouldStop: shouldStop) }
    }

    /// Loads the plans kept ahead into this process's memory, when it keeps them there
    /// (``ServiceStorage/plansInMemoryBytes``) and holds none (at start, and after a new prior
    /// epoch emptied it): a page of tables at a time, until the memory is full. Call it after a
    /// complete ``keepSchedulersCurrent(shouldStop:)`` pass, off the request path; answers do not
    /// change, only how many are answered without a round trip. The check runs where `work` runs
    /// checks, each page where it runs reads.
    /// - Parameter shouldStop: Asked between pages (a shutdown).
    /// - Returns: The tables loaded (0 when it keeps none in memory, or already held some).
    @discardableResult
    package func preloadPlans(on work: some BlockingWork, shouldStop: @escaping @Sendable () -> Bool = { false }) async throws -> Int {
        guard let inMemory else { return 0 }
        return try await inMemory.preload(
            check: { last in try await work.check { try await self.checkChanges(last) } },
            page: { after in
                try await work.read { try await self.readers.with { try await $0.repository.planTablePage(after: after, limit: Self.preloadPage) } }
            },
            shouldStop: shouldStop)
    }

    /// Tables a page of ``preloadPlans(on:shouldStop:)`` reads (about 3 MB for the benchmark's fleet).
    static let preloadPage = 1000

    // MARK: Plans (FetchCastService+Plan.swift)

    /// Every planned fetch of every device in [`from`, `to`), a batch of devices at a time (in
    /// name order), as `predict` does for a whole store.
    ///
    /// - Parameters:
    ///   - from: Plans start here (Unix seconds).
    ///   - to: Only fetches before this (at most 24 hours after `from`: the planner's horizon).
    ///   - budget: Fetches per device per day.
    ///   - delivery: The push service a backend sends through (``PredictionRequest/delivery``).
    ///   - batchSize: Devices planned at once (memory is O(`batchSize`), not O(devices)).
    ///   - after: Only devices whose names follow this one in byte order (a page's cursor).
    ///   - limit: At most this many devices (a page); ``PlanSweep/nextAfter`` says where the
    ///     next page starts when more remain.
    /// - Returns: A sweep; call ``PlanSweep/next()`` until it returns `nil`.
    package func sweep(
        from: Double, to: Double, budget: Double, delivery: DeliveryOptions? = nil, batchSize: Int = 256, after: String? = nil,
        limit: Int = .max
    ) async throws -> PlanSweep {
        let reader = try await readers.take()
        do {
            // The same calls `ModelRepository.forEachBatch` makes, one batch per `next()`, so that
            // a transport can write each batch before the next is planned: batches of ids in the
            // names' byte order (a set of names would merge canonically equivalent ids).
            let names = try await reader.repository.refresh(ids: []).deviceNames
            var ids = names.keys.sorted { ModelRepository.precedes(names[$0]!, names[$1]!) }
            if let after { ids.removeAll { !ModelRepository.precedes(after, names[$0]!) } }
            let page = ids.prefix(max(1, limit))
            return PlanSweep(
                service: self, reader: reader, devices: page.map { ($0, names[$0]!) }, from: from, to: to, budget: budget,
                delivery: delivery, batchSize: max(1, batchSize), nextAfter: page.count < ids.count ? page.last.map { names[$0]! } : nil)
        } catch {
            readers.giveBack(reader)
            throw error
        }
    }

    /// A sweep over every device's plan, batch by batch (see ``FetchCastService/sweep(from:to:budget:batchSize:)``).
    package final class PlanSweep: @unchecked Sendable {
        // Unchecked: used by one task at a time (a transport calls `next(on:)` from one task), which
        // the compiler cannot see; its reader is one connection, which one task at a time may use.
        private let service: FetchCastService
        private var reader: StoreConnection?
        /// Every device's id and name, in the names' byte order.
        private let devices: [(id: Int64, name: String)]
        private let request: PredictionRequest
        private let to: Double
        private let batchSize: Int
        private var start = 0
        /// The last device of this page when more follow: the next page's `after`.
        package let nextAfter: String?

        fileprivate init(
            service: FetchCastService, reader: StoreConnection, devices: [(id: Int64, name: String)], from: Double, to: Double, budget: Double,
            delivery: DeliveryOptions?, batchSize: Int, nextAfter: String?
        ) {
            self.nextAfter = nextAfter
            self.service = service
            self.reader = reader
            self.devices = devices
            self.to = to
            self.batchSize = batchSize
            var request = PredictionRequest(at: from, count: .max, budget: budget)
            // Through a push service each plan is made from the device's events (plans kept
            // ahead are the plans as they are).
            request.delivery = delivery
            self.request = request
        }

        deinit { if let reader { service.readers.giveBack(reader) } }

        /// The next batch's fetches in [`from`, `to`), or `nil` when every device was planned.
        /// A device's plan kept ahead answers for it when it applies, from where
        /// ``FetchCastService/planWithNote(_:on:)`` takes it; the others of the batch are planned
        /// together, as `predict` does. What blocks runs on `work`'s threads.
        package func next(on work: some BlockingWork) async throws -> [Prediction]? {
            guard let reader, start < devices.count else {
                if let reader { service.readers.giveBack(reader) }
                self.reader = nil
                return nil
            }
            let batch = Array(devices[start..<min(devices.count, start + batchSize)])
            start += batchSize
            var probe = request
            probe.device = ""
            var kept: [[Prediction]?] = Array(repeating: nil, count: batch.count)
            if let inMemory = service.inMemory, let (_, start) = ModelRepository.keptAhead(probe) {
                // From memory after one check for the batch (a round trip saved a device).
                kept = try await service.keptInMemory(
                    batch.map(\.name), request: request, start: start, in: inMemory, on: work, read: { try await $0(reader) }
                ).map { $0?.plan }
            }
            let (request, service, known) = (self.request, self.service, kept)
            let planned = try await work.read { () async throws -> [[Prediction]] in
                var plans = known
                var rest: [Int] = []
                for (i, (_, name)) in batch.enumerated() where plans[i] == nil {
                    var one = request
                    one.device = name
                    // Kept in the store (a service that keeps none in memory).
                    if service.inMemory == nil, let plan = try await reader.repository.precomputedPlan(one) {
                        plans[i] = plan
                    } else {
                        rest.append(i)
                    }
                }
                if !rest.isEmpty {
                    let snapshot = try await reader.repository.refresh(ids: Set(rest.map { batch[$0].id }))
                    for i in rest {
                        try WorkDeadline.checkCurrent()
                        var one = request
                        one.device = snapshot.deviceNames[batch[i].id]
                        plans[i] = try await Predictor.predict(one, snapshot: snapshot)
                    }
                }
                service.answeredAhead.add(batch.count - rest.count, ordering: .relaxed)
                return plans.map { $0 ?? [] }
            }
            return planned.flatMap { $0 }.filter { $0.fetchAtUnix < to }
        }
    }

    /// How many plans ``plan(_:on:)`` answered from the plans the warm-up kept ahead (the rest were
    /// made from the device's scheduler).
    package var plansAnsweredAhead: Int { answeredAhead.load(ordering: .relaxed) }

    /// How many empty plans kept ahead were noted from what their table keeps, without reading
    /// the device's model.
    package var notesFromTables: Int { notedFromTables.load(ordering: .relaxed) }

    // MARK: Devices and models

    /// One page of devices in name order, after `after`.
    package func devices(after: String?, limit: Int) async throws -> [DeviceListing] {
        try await readers.with { try await $0.store.deviceSummaries(after: after, limit: limit) }
    }

    /// How many devices have an event after `time` (Unix seconds): those a plan from `time`
    /// replays from the start of their history instead of going on from a saved scheduler.
    /// - Complexity: one pass over the store's per-file counts.
    package func devicesWithEvents(after time: Double) async throws -> Int64 {
        try await readers.with { try await $0.store.devicesWithEvents(after: Int64((time * 1_000_000).rounded(.down))) }
    }

    /// What `fetchcast model --device D [--app A]` shows, as a value.
    /// - Throws: ``ServiceError/unknownDevice(_:)`` or ``ServiceError/unknownApp(_:)``.
    package func model(device: String, app: String?) async throws -> ModelDocument {
        try await readers.with { reader in
            let snapshot = try await reader.repository.refresh(devices: [device])
            try Self.check(PredictionRequest(device: device, app: app), in: snapshot)
            return try ModelView(snapshot: snapshot, device: device, app: app).document()
        }
    }

    // MARK: Health

    /// Throws unless the store can be read.
    package func checkReadable() async throws {
        _ = try await readers.with { try await $0.store.lastEventID() }
    }

    /// Bytes the store takes: the database file and its write-ahead log, or the PostgreSQL
    /// database's size.
    package var storeBytes: Int64 {
        get async { (try? await readers.with { await $0.store.storeBytes }) ?? 0 }
    }

    static func check(_ request: PredictionRequest, in snapshot: ModelRepository.Snapshot) throws {
        if let device = request.device, snapshot.device(named: device).flatMap({ snapshot.models[$0] }) == nil {
            throw ServiceError.unknownDevice(device)
        }
        if let app = request.app, snapshot.app(named: app) == nil {
            throw ServiceError.unknownApp(app)
        }
    }
}
