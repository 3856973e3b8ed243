/// Where the blocking parts of a plan asked from a task run (``FetchCastService/planWithNote(_:on:)``,
/// ``FetchCastService/PlanSweep/next(on:)``): the server's threads (``BlockingPools``), or
/// Dispatch's in process (``DispatchWork``).
package protocol BlockingWork: Sendable {
    /// Runs `body`, which blocks on the store (a reader's connection), on a thread that may block.
    func read<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T
    /// Runs a check of the store for the plans kept in memory (``PlansInMemory``), on a thread
    /// of its own: not one of ``read(_:)``'s, which may all be waiting for that check.
    func check<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T
}
