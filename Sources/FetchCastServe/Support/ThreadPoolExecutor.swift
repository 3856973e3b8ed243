import NIOPosix

/// A task executor running its jobs on the threads of a `NIOThreadPool`: a task that prefers it
/// (`withTaskExecutorPreference`) runs the store's synchronous parts there (SQLite's reads, a
/// catch-up's replay), off Swift's few cooperative threads, and on PostgreSQL gives its thread up
/// at each round trip.
final class ThreadPoolExecutor: TaskExecutor {
    let pool: NIOThreadPool

    init(_ pool: NIOThreadPool) {
        self.pool = pool
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        // A stopped pool hands its work back at once (`.cancelled`), on the calling thread: the
        // job is run there all the same, so that no task is left suspended for ever.
        pool.submit { _ in job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
