import FetchCastPredict
import Logging
import NIOPosix
import Prometheus
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Keeps every device's caught-up scheduler saved in the store, in the background, so that a
/// device's first plan after the server starts (or after a new prior epoch) restores one row
/// instead of replaying the device's history (``FetchCastService/keepSchedulersCurrent(shouldStop:)``).
///
/// After a complete pass, a process that keeps plans in memory (PostgreSQL) and holds none
/// loads them (``FetchCastService/preloadPlans(on:shouldStop:)``), in a task of its own.
///
/// A pass runs once at start (every device, unless a complete pass of the same epoch is
/// recorded: then only the devices with events since) and after each fold (the devices it
/// changed; every device when the fold started a new epoch). Passes run one at a time on a
/// thread of their own at a lower scheduling priority, so that plans come first; a pass asked
/// for while one runs runs once after it. Answers never depend on it, only their cost.
final class SchedulerWarmup: Service, Sendable {
    private let service: FetchCastService
    /// Where a load of plans into memory reads (the server's threads).
    private let work: any BlockingWork
    private let enabled: Bool
    private let thread = NIOThreadPool(numberOfThreads: 1)
    /// Runs the passes' tasks on ``thread``.
    private let executor: ThreadPoolExecutor
    /// Whether a pass runs, and whether another was asked for meanwhile.
    private let state = Mutex(OneAtATime())
    /// The same for the loads of plans into memory.
    private let loading = Mutex(OneAtATime())
    private let stopping = Atomic<Bool>(false)
    private let saved: Prometheus.Counter
    private let preloaded: Prometheus.Counter
    private let logger: Logger

    init(
        service: FetchCastService, work: any BlockingWork, enabled: Bool, saved: Prometheus.Counter, preloaded: Prometheus.Counter,
        logger: Logger
    ) {
        self.service = service
        self.work = work
        self.enabled = enabled
        self.saved = saved
        self.preloaded = preloaded
        self.logger = logger
        thread.start()
        executor = ThreadPoolExecutor(thread)
        thread.submit { _ in Self.lowerPriority() }
    }

    /// Asks for a pass (runs now, or once after the running one).
    func schedule() {
        guard enabled, !stopping.load(ordering: .relaxed) else { return }
        guard state.withLock({ $0.ask() }) else { return }
        Task(executorPreference: executor) { [self] in
            repeat { await pass() } while state.withLock { $0.again(unless: stopping.load(ordering: .relaxed)) }
        }
    }

    private func pass() async {
        let started = ContinuousClock.now
        do {
            let outcome = try await service.keepSchedulersCurrent(shouldStop: { [self] in stopping.load(ordering: .relaxed) })
            saved.increment(by: Int64(outcome.saved))
            if outcome.saved > 0 {
                logger.info("schedulers kept current", metadata: [
                    "devices": "\(outcome.devices)", "saved": "\(outcome.saved)", "complete": "\(outcome.complete)",
                    "seconds": "\((ContinuousClock.now - started).components.seconds)",
                ])
            }
            if outcome.complete { preload() }
        } catch {
            // Plans stay exact without it (they replay the history); say why it stopped.
            logger.warning("keeping schedulers current failed", metadata: ["error": "\(error)"])
        }
    }

    /// Loads the plans kept ahead into memory when the process keeps them there and holds none
    /// (``FetchCastService/preloadPlans(on:shouldStop:)``), after a complete pass: in a task, so
    /// that the pass's thread goes on. Loads run one at a time; one asked for while one runs runs
    /// once after it.
    private func preload() {
        guard loading.withLock({ $0.ask() }) else { return }
        Task { [self] in
            repeat { await load() } while loading.withLock { $0.again(unless: stopping.load(ordering: .relaxed)) }
        }
    }

    private func load() async {
        let started = ContinuousClock.now
        do {
            let loaded = try await service.preloadPlans(on: work, shouldStop: { [self] in stopping.load(ordering: .relaxed) })
            preloaded.increment(by: Int64(loaded))
            if loaded > 0 {
                logger.info("plans kept ahead loaded into memory", metadata: [
                    "tables": "\(loaded)", "duration": "\(ContinuousClock.now - started)",
                ])
            }
        } catch {
            // Plans are read from the database instead; say why (a shutdown is no reason).
            guard !stopping.load(ordering: .relaxed) else { return }
            logger.warning("loading plans into memory failed", metadata: ["error": "\(error)"])
        }
    }

    /// A nice value of 10 for the calling thread, so that request threads come first on a busy
    /// machine (on Linux the nice value is per thread, and `who` 0 is the calling one).
    private static func lowerPriority() {
        #if os(Linux)
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
        #endif
    }

    /// How long a stop waits for the running pass.
    static let stopWait = Duration.seconds(2)

    /// Runs a first pass, waits for graceful shutdown, then stops between two devices.
    ///
    /// A pass that has not stopped within ``stopWait`` (a batch's read, catch-up or save take
    /// seconds on a loaded machine) is left to the process's exit instead of holding the
    /// shutdown past its bound (``NIOThreadPool/stop(within:)``): what it saves is derived.
    func run() async throws {
        schedule()
        try? await gracefulShutdown()
        stopping.store(true, ordering: .relaxed)
        // The pass's task may be waiting for the database, off the thread: waited for first.
        let deadline = ContinuousClock.now + Self.stopWait
        while state.withLock({ $0.running }), ContinuousClock.now < deadline {
            do { try await Task.sleep(for: .milliseconds(10)) } catch { break }
        }
        if await !thread.stop(within: max(.zero, deadline - ContinuousClock.now)) || state.withLock({ $0.running }) {
            logger.notice("the scheduler warm-up did not stop within \(Self.stopWait); stopping without it (the next start saves its schedulers again)")
        }
    }
}

/// Work that runs one at a time, and once more after the running one when asked for meanwhile.
private struct OneAtATime {
    var running = false
    var asked = false

    /// Asks for a run: whether to start one now (none runs); otherwise one runs after it.
    mutating func ask() -> Bool {
        if running {
            asked = true
            return false
        }
        running = true
        return true
    }

    /// At the end of a run: whether to run again (asked for meanwhile, and not `stopping`);
    /// otherwise the work stops running.
    mutating func again(unless stopping: Bool) -> Bool {
        if asked, !stopping {
            asked = false
            return true
        }
        running = false
        return false
    }
}
