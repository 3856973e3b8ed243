import NIOPosix
import ServiceLifecycle

/// The threads that may block on SQLite, apart from the event loops: one for ingests (they
/// are serialized anyway), several for reads, so that plans never queue behind an ingest.
final class BlockingPools: Service, Sendable {
    let reads: NIOThreadPool
    let writes: NIOThreadPool

    /// Starts the threads.
    /// - Parameter readThreads: Threads that plan at once (each holds one SQLite reader).
    init(readThreads: Int) {
        reads = NIOThreadPool(numberOfThreads: max(1, readThreads))
        writes = NIOThreadPool(numberOfThreads: 1)
        reads.start()
        writes.start()
    }

    /// Runs a blocking read.
    func read<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await reads.runIfActive(body)
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
