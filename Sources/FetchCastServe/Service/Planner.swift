import FetchCastCore
import FetchCastPredict
import FetchCastStore
import Foundation

/// Plans for devices from a store on either engine, for a caller in Swift concurrency (a push
/// backend, an app's server): what `fetchcast predict --device D` prints and `GET
/// /v1/devices/{device}/plan` answers, from the same code (`FetchCastService`), which is the code
/// `fetchcast evaluate` scores.
///
/// The store's work (SQLite's reads, replaying a device's history) runs on threads of the
/// planner's own, not on the tasks' few cooperative threads, and a round trip to PostgreSQL holds
/// no thread: a planner may be used from many tasks at once, where a `ModelRepository` serves one
/// task at a time. On PostgreSQL
/// the plans kept ahead are held in memory and answered after one check of the database shared
/// by every plan asked meanwhile, as `fetchcast serve` answers them; a plan includes every event
/// committed before it was asked, whichever process ingested it.
///
/// It writes what a reader of `serve` writes, and nothing else: the first fold of a store never
/// folded (under the store's write lock); the model it folds for a device's newer events stays in
/// memory (`fetchcast ingest`, `serve` or `predict` save it), and the plans kept ahead are those
/// `serve`'s warm-up saved, loaded when the planner opens. Call ``shutdown()`` when done; a planner
/// released without it stops its threads without waiting for them.
public final class Planner: Sendable {
    private let service: FetchCastService
    /// Threads of its own: the server's pools, without a deadline (stopped when the planner is
    /// released, if ``shutdown()`` was not called).
    let work: BlockingPools

    /// Opens the store at `location`, which must exist (an SQLite file, or a PostgreSQL database
    /// holding FetchCast's tables); plans asked without `at` start at the clock.
    /// - Parameter threads: Threads that read at once (default: as `fetchcast serve` reads, 2 a
    ///   core on SQLite, 16 a core on PostgreSQL, whose reads mostly wait for the database).
    /// - Throws: `StoreError` when the store does not exist or cannot be opened.
    public init(location: StoreLocation, threads: Int? = nil) async throws {
        // A missing store is an error, not a new one: nothing is created.
        let log = try await location.openLog(false)
        await log.close()
        let configuration = ServeConfiguration(store: location)
        let storage = configuration.storage ?? .sqlite(path: configuration.databasePath)
        let work = BlockingPools(readThreads: threads ?? configuration.readThreads, deadline: nil)
        let service: FetchCastService
        do {
            service = try await work.read { try await FetchCastService(storage: storage) }
        } catch {
            _ = await work.stop()
            throw error
        }
        // On PostgreSQL, the plans kept ahead loaded into memory now, as a served process loads
        // them after its warm-up: a device's first plan is then answered without a round trip.
        // Without them every plan is still answered, reading the database.
        _ = try? await service.preloadPlans(on: work)
        self.service = service
        self.work = work
    }

    /// The plan of `request.device` from `request.at` (the clock when `nil`).
    /// - Throws: `ServiceError` for a device or app the store does not hold; `StoreError` when
    ///   the store fails.
    public func plan(_ request: PredictionRequest) async throws -> [Prediction] {
        try await service.plan(request, on: work)
    }

    /// ``plan(_:)``, with why the plan is empty when it is, in `fetchcast predict`'s words.
    public func planWithNote(_ request: PredictionRequest) async throws -> (fetches: [Prediction], note: String?) {
        try await service.planWithNote(request, on: work)
    }

    /// Stops the planner's threads, waiting up to 2 s for what they run; plans asked after it fail.
    public func shutdown() async {
        _ = await work.stop()
    }
}
