import Synchronization

/// Waits for work that a lost connection may leave unanswered for ever.
enum GivingUp {
    /// What `operation` returns or throws, unless `isLost` has answered `true` for `grace`
    /// seconds on end first: then its task is cancelled, left behind, and `lost` is thrown.
    ///
    /// For a statement PostgreSQL will never answer: PostgresNIO (1.x) drops a statement sent on
    /// a connection whose close has completed, and its task then waits for ever. Such a task
    /// does nothing more (what it waits for is gone); one still running stops at its next
    /// cancellation check, and a `COPY` of it never calls its writer on a closed connection
    /// (``CopyStream``).
    static func run<T: Sendable>(
        _ operation: @escaping @Sendable () async throws -> T, after grace: Double, of isLost: @escaping @Sendable () -> Bool,
        throwing lost: @escaping @Sendable () -> any Error
    ) async throws -> T {
        let work = Task { try await operation() }
        let once = Once()
        return try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<T, any Error>) in
            Task {
                let result: Result<T, any Error>
                do { result = .success(try await work.value) } catch { result = .failure(error) }
                if once.first() { waiter.resume(with: result) }
            }
            Task {
                var lostFor = 0.0
                while !once.over {
                    try? await Task.sleep(for: .milliseconds(100))
                    lostFor = isLost() ? lostFor + 0.1 : 0
                    if lostFor > grace, once.first() {
                        work.cancel()
                        waiter.resume(throwing: lost())
                        return
                    }
                }
            }
        }
    }

    /// Says yes to the first who asks.
    private final class Once: Sendable {
        private let done = Atomic(false)
        func first() -> Bool { !done.exchange(true, ordering: .acquiringAndReleasing) }
        var over: Bool { done.load(ordering: .acquiring) }
    }
}
