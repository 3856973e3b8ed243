import FetchCastCore
import Hummingbird
import Logging
import NIOPosix
import ServiceLifecycle

/// The threads that may block on the store, apart from the event loops: one for ingests (they
/// are serialized anyway), several for reads, so that plans never queue behind an ingest, and
/// one for the checks of the plans kept in memory (one at a time anyway), which reads may wait for.
/// The server's, with a deadline; a ``Planner``'s, without.
package final class BlockingPools: Service, BlockingWork {
    let reads: NIOThreadPool
    let writes: NIOThreadPool
    let checks: NIOThreadPool
    /// How long a read may take from its arrival, the wait for a thread included; `nil`: as long
    /// as it takes (a library caller cancels its own tasks).
    let deadline: Duration?

    /// Starts the threads.
    /// - Parameters:
    ///   - readThreads: Threads that plan at once (each holds one SQLite reader).
    ///   - deadline: How long a read may take from its arrival (then `503`); `nil`: no limit.
    package init(readThreads: Int, deadline: Duration? = .seconds(10)) {
        self.deadline = deadline
        reads = NIOThreadPool(numberOfThreads: max(1, readThreads))
        writes = NIOThreadPool(numberOfThreads: 1)
        checks = NIOThreadPool(numberOfThreads: 1)
        reads.start()
        writes.start()
        checks.start()
    }

    /// Runs a blocking read under a ``WorkDeadline`` of `deadline` from now: not at all when
    /// it waited for a thread past it, and stopped at the read's next check when it runs past
    /// it (or when the calling task is cancelled); either way a `503` with `Retry-After`.
    package func read<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await run(body, on: reads)
    }

    /// Runs a check of the store for the plans kept in memory under a ``WorkDeadline`` of
    /// `deadline`, as ``read(_:)`` runs a read; but not stopped when the task that runs it is
    /// cancelled (its client gone): the plans waiting for it are other requests'.
    package func check<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await run(body, on: checks, stoppedWithItsTask: false)
    }

    private func run<T: Sendable>(
        _ body: @escaping @Sendable () throws -> T, on pool: NIOThreadPool, stoppedWithItsTask: Bool = true
    ) async throws -> T {
        guard let deadline else { return try await pool.runIfActive(body) }
        let work = WorkDeadline(limit: deadline)
        let running = {
            try await pool.runIfActive {
                try WorkDeadline.$current.withValue(work) {
                    try WorkDeadline.checkCurrent()
                    return try body()
                }
            }
        }
        do {
            guard stoppedWithItsTask else { return try await running() }
            return try await withTaskCancellationHandler(operation: running, onCancel: { work.stop() })
        } catch let stopped as WorkStopped {
            throw APIError(.serviceUnavailable, Self.message(stopped), headers: [.retryAfter: "1"])
        }
    }

    /// Runs a blocking write.
    func write<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await writes.runIfActive(body)
    }

    /// How long a stop waits for the pools' running work (both pools stop at once).
    static let stopWait = Duration.seconds(2)

    /// Waits for graceful shutdown (after the HTTP server, which finishes in-flight requests
    /// first), then stops the threads of both pools at once. What still runs by then is no
    /// request's: a fold the last ingest scheduled (derived: the next start folds again). It
    /// gets ``stopWait``, then is left to the process's exit (``NIOThreadPool/stop(within:)``),
    /// which rolls it back.
    package func run() async throws {
        try? await gracefulShutdown()
        if await !stop() {
            Logger(label: "fetchcast.serve").notice("a fold or read still running at shutdown was not waited for past \(Self.stopWait); the next start folds again")
        }
    }

    /// Stops the threads of every pool at once, waiting at most ``stopWait`` for the work they
    /// run; whether they all stopped.
    package func stop() async -> Bool {
        async let readsStopped = reads.stop(within: Self.stopWait)
        async let writesStopped = writes.stop(within: Self.stopWait)
        async let checksStopped = checks.stop(within: Self.stopWait)
        let stopped = await (readsStopped, writesStopped, checksStopped)
        return stopped.0 && stopped.1 && stopped.2
    }

    /// `limit` in seconds as a person writes them (10, 0.5).
    static func seconds(_ limit: Duration) -> String {
        let value = Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18
        return OptionRange<Double>.text((value * 1000).rounded() / 1000)
    }

    /// Why a read was not answered.
    static func message(_ stopped: WorkStopped) -> String {
        switch stopped {
        case .pastDeadline(let limit):
            "the server is busy: this request was not answered within its deadline of \(seconds(limit)) s "
                + "(serve --request-deadline) and was stopped; try again"
        case .stopped:
            "the server stopped this request before it was answered; try again"
        }
    }
}
