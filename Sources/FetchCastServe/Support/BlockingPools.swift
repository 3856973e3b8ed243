import Hummingbird
import NIOPosix
import ServiceLifecycle

/// The threads that may block on SQLite, apart from the event loops: one for ingests (they
/// are serialized anyway), several for reads, so that plans never queue behind an ingest.
final class BlockingPools: Service, Sendable {
    let reads: NIOThreadPool
    let writes: NIOThreadPool
    /// How long a read may wait for a thread before it is refused rather than run.
    let queueDeadline: Duration

    /// Starts the threads.
    /// - Parameters:
    ///   - readThreads: Threads that plan at once (each holds one SQLite reader).
    ///   - queueDeadline: How long a read may wait for a thread (then `503`, not run).
    init(readThreads: Int, queueDeadline: Duration = .seconds(30)) {
        self.queueDeadline = queueDeadline
        reads = NIOThreadPool(numberOfThreads: max(1, readThreads))
        writes = NIOThreadPool(numberOfThreads: 1)
        reads.start()
        writes.start()
    }

    /// Runs a blocking read, unless it waited for a thread longer than `queueDeadline`: then
    /// it throws a `503` with `Retry-After` without running.
    func read<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        let queued = ContinuousClock.now, deadline = queueDeadline
        return try await reads.runIfActive {
            let waited = ContinuousClock.now - queued
            guard waited <= deadline else {
                throw APIError(
                    .serviceUnavailable, "the server is busy: this request waited \(waited.components.seconds) s for a reader thread; try again",
                    headers: [.retryAfter: "1"])
            }
            return try body()
        }
    }

    /// Runs a blocking write.
    func write<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await writes.runIfActive(body)
    }

    /// Waits for graceful shutdown (after the HTTP server, which finishes in-flight requests
    /// first), then stops the threads.
    func run() async throws {
        try? await gracefulShutdown()
        try await reads.shutdownGracefully()
        try await writes.shutdownGracefully()
    }
}
