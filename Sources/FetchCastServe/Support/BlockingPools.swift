import FetchCastCore
import Hummingbird
import Logging
import NIOPosix
import ServiceLifecycle
import Synchronization

/// The threads the store's work runs on, apart from the event loops: one for ingests (they are
/// serialized anyway), several for reads, so that plans never queue behind an ingest, and one for
/// the checks of the plans kept in memory (one at a time anyway), which reads may wait for. Work
/// runs as a task preferring a pool's threads (``ThreadPoolExecutor``): SQLite's reads and a
/// catch-up's replay run there, and on PostgreSQL the task gives its thread up at each round trip
/// (no thread waits for the database). The server's, with a deadline; a ``Planner``'s, without.
package final class BlockingPools: Service, BlockingWork {
    let reads: NIOThreadPool
    let writes: NIOThreadPool
    let checks: NIOThreadPool
    private let readExecutor: ThreadPoolExecutor
    private let writeExecutor: ThreadPoolExecutor
    private let checkExecutor: ThreadPoolExecutor
    /// Set by ``stop()``: work asked for afterwards is refused, as a stopped pool refuses it.
    private let stopped = Atomic(false)
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
        readExecutor = ThreadPoolExecutor(reads)
        writeExecutor = ThreadPoolExecutor(writes)
        checkExecutor = ThreadPoolExecutor(checks)
    }

    /// Pools released without ``stop()`` (a ``Planner`` its caller never shut down) stop their
    /// threads without waiting: an NIO pool's threads hold it, so they would otherwise run on,
    /// idle, until the process exits.
    deinit {
        guard !stopped.load(ordering: .acquiring) else { return }
        for pool in [reads, writes, checks] { pool.shutdownGracefully { _ in } }
    }

    /// Runs a read under a ``WorkDeadline`` of `deadline` from now: not at all when it waited
    /// for a thread past it, and stopped at the read's next check when it runs past it (or when
    /// the calling task is cancelled); either way a `503` with `Retry-After`.
    package func read<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await run(body, on: readExecutor)
    }

    /// Runs a check of the store for the plans kept in memory under a ``WorkDeadline`` of
    /// `deadline`, as ``read(_:)`` runs a read; but not stopped when the task that runs it is
    /// cancelled (its client gone): the plans waiting for it are other requests'.
    package func check<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await run(body, on: checkExecutor, stoppedWithItsTask: false)
    }

    /// Runs `body` in the calling task, preferring `executor`'s threads: its synchronous parts
    /// run there, and a round trip to PostgreSQL gives the thread up until it is answered.
    private func run<T: Sendable>(
        _ body: @escaping @Sendable () async throws -> T, on executor: ThreadPoolExecutor, stoppedWithItsTask: Bool = true
    ) async throws -> T {
        guard !stopped.load(ordering: .acquiring) else { throw NIOThreadPoolError.ThreadPoolInactive() }
        guard let deadline else { return try await withTaskExecutorPreference(executor, operation: body) }
        let work = WorkDeadline(limit: deadline)
        let running = {
            try await withTaskExecutorPreference(executor) {
                try await WorkDeadline.$current.withValue(work) {
                    try WorkDeadline.checkCurrent()
                    return try await body()
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

    /// Runs a write (an ingest, a fold) on the thread for writes.
    func write<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        guard !stopped.load(ordering: .acquiring) else { throw NIOThreadPoolError.ThreadPoolInactive() }
        return try await withTaskExecutorPreference(writeExecutor, operation: body)
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
        stopped.store(true, ordering: .releasing)
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
