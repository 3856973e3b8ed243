import Dispatch
import FetchCastServe

/// The blocking parts of plans asked from tasks in process, on threads as `fetchcast serve`
/// runs them: reads on Dispatch's pool for blocking work, checks on a thread of their own.
struct BenchWork: BlockingWork {
    private let checks = DispatchQueue(label: "fetchcast.bench.checks")

    func read<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await Self.run(body, on: .global())
    }

    func check<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await Self.run(body, on: checks)
    }

    private static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T, on queue: DispatchQueue) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}
