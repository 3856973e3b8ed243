import Dispatch

/// The blocking parts of plans asked from tasks in process (the library, the benchmark, tests),
/// on threads as `fetchcast serve` runs them (``BlockingPools``): reads on Dispatch's pool for
/// blocking work, checks on a thread of their own. Unlike the server's, it sets no deadline.
package struct DispatchWork: BlockingWork {
    private let checks = DispatchQueue(label: "fetchcast.checks")

    package init() {}

    package func read<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await Self.run(body, on: .global())
    }

    package func check<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await Self.run(body, on: checks)
    }

    private static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T, on queue: DispatchQueue) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}
