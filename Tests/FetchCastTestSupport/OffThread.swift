import Dispatch

/// Runs blocking work (a synchronous store call that waits on its own tasks or event loops) on
/// a thread of its own, so that it never holds one of Swift concurrency's few threads while it
/// waits for another.
package func offThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
    }
}
