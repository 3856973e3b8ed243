import NIOCore
import PostgresNIO
import Synchronization

/// What a `COPY` needs to know of its connection to call PostgresNIO's `COPY` writer only when
/// that is safe (``CopyStream``): one per connection of a ``PostgresEventLog``.
///
/// PostgresNIO (1.x) stops the process (`preconditionFailure("Copy mode is only supported for
/// extended queries")`) when a writer call (`write`, or the `CopyDone`/`CopyFail` that
/// `copyFrom` sends when its closure returns or throws) reaches a connection whose state
/// machine has left the query: closed, or closing, while its channel handler is still in the
/// pipeline. That lasts from the close (the server's end of the session, or this process's
/// `close()`) to the removal of the channel's handlers, one turn of the event loop later, when
/// the close future completes; from then on every writer call fails with an error instead.
/// A writer call made from another thread is queued on the event loop and may run in that
/// window; so writer calls are made on the event loop (``executor``), after asking
/// ``acceptsCopyData`` there: nothing else runs on the loop between the answer and the call.
final class ConnectionWatch: Sendable {
    let connection: PostgresConnection
    /// Runs tasks on the connection's event loop.
    let executor: EventLoopExecutor
    private let state = Mutex(State())

    private struct State {
        /// The connection's close has completed (its handlers removed).
        var closed = false
        /// This process is closing the connection (its state machine may already have left the
        /// query while the channel is still open, as TLS's closing handshake keeps it).
        var closeRequested = false
        var next = 0
        var waiting: [Int: CheckedContinuation<Result<Void, any Error>?, Never>] = [:]
    }

    init(_ connection: PostgresConnection) {
        self.connection = connection
        executor = EventLoopExecutor(connection.eventLoop)
        connection.closeFuture.whenComplete { _ in self.closeCompleted() }
    }

    /// Records that this process is about to close the connection: its `COPY` writes no more.
    func requestClose() {
        state.withLock { $0.closeRequested = true }
    }

    /// Whether a `COPY` may call its writer now; to be asked on the connection's event loop,
    /// where no close can begin between the answer and the call made right after it.
    var acceptsCopyData: Bool {
        !connection.isClosed && !state.withLock { $0.closeRequested }
    }

    /// Whether the caller runs on the connection's event loop.
    var onLoop: Bool { executor.loop.inEventLoop }

    /// Waits until the operation `start` begins reports its result, or until the connection's
    /// close has completed (`nil`), whichever comes first: an operation of PostgresNIO whose
    /// connection is lost may never report (a `COPY` write waiting for the socket to drain).
    func outcome(of start: (@escaping @Sendable (Result<Void, any Error>) -> Void) -> Void) async -> Result<Void, any Error>? {
        await withCheckedContinuation { (waiter: CheckedContinuation<Result<Void, any Error>?, Never>) in
            let id: Int? = state.withLock { s in
                guard !s.closed else { return nil }
                s.next += 1
                s.waiting[s.next] = waiter
                return s.next
            }
            guard let id else { return waiter.resume(returning: nil) }
            start { result in self.state.withLock { $0.waiting.removeValue(forKey: id) }?.resume(returning: result) }
        }
    }

    /// Waits until the connection's close has completed.
    func untilClosed() async {
        _ = await outcome { _ in }
    }

    /// Moves the calling task onto the connection's event loop, when it runs with
    /// ``executor`` as its preferred executor (a resumed task is queued on it).
    func moveToLoop() async {
        // A few rounds at most: should the runtime resume the task elsewhere, it carries on there.
        for _ in 0..<4 where !onLoop {
            await withCheckedContinuation { (resumed: CheckedContinuation<Void, Never>) in executor.loop.execute { resumed.resume() } }
        }
    }

    private func closeCompleted() {
        let waiting = state.withLock { s in
            s.closed = true
            defer { s.waiting = [:] }
            return Array(s.waiting.values)
        }
        for waiter in waiting { waiter.resume(returning: nil) }
    }
}

/// A task executor running its jobs on one SwiftNIO event loop.
final class EventLoopExecutor: TaskExecutor {
    let loop: any EventLoop

    init(_ loop: any EventLoop) {
        self.loop = loop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
