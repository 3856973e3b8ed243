/// Where the store's work for a plan asked from a task runs (``FetchCastService/planWithNote(_:on:)``,
/// ``FetchCastService/PlanSweep/next(on:)``): on the server's threads (``BlockingPools``), or in
/// the calling task (``InlineWork``).
package protocol BlockingWork: Sendable {
    /// Runs `body`, which reads the store (a reader's connection), where this work runs reads.
    func read<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T
    /// Runs a check of the store for the plans kept in memory (``PlansInMemory``): apart from
    /// ``read(_:)``'s threads, which may all be busy with reads.
    func check<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T
}
