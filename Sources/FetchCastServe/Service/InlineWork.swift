/// The store's work for plans asked from tasks in process (the library's callers, the
/// benchmark, tests), run in the calling task: on PostgreSQL a round trip suspends it, on SQLite a
/// read runs on the thread the task is on. Unlike the server's (``BlockingPools``), it sets no
/// deadline.
package struct InlineWork: BlockingWork {
    package init() {}

    package func read<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await body()
    }

    package func check<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await body()
    }
}
