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
        /// Each operation raced against the close (``race(_:done:)``): what to call once.
        var waiting: [Int: @Sendable (Result<Void, any Error>?) -> Void] = [:]
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

    /// Calls `done` once: with what the operation `start` begins reports, or with `nil` when the
    /// connection's close completes first (or has completed): an operation of PostgresNIO whose
    /// connection is lost may never report (a `COPY` write waiting for the socket to drain; a
    /// statement written to a closed channel, which PostgresNIO 1.x writes without a promise).
    /// Nothing is kept once `done` has been called.
    func race(
        _ start: (@escaping @Sendable (Result<Void, any Error>) -> Void) -> Void, done: @escaping @Sendable (Result<Void, any Error>?) -> Void
    ) {
        let id: Int? = state.withLock { s in
            guard !s.closed else { return nil }
            s.next += 1
            s.waiting[s.next] = done
            return s.next
        }
        guard let id else { return done(nil) }
        start { result in self.state.withLock { $0.waiting.removeValue(forKey: id) }?(result) }
    }

    /// Waits until the operation `start` begins reports its result, or until the connection's
    /// close has completed (`nil`), whichever comes first (``race(_:done:)``).
    func outcome(of start: (@escaping @Sendable (Result<Void, any Error>) -> Void) -> Void) async -> Result<Void, any Error>? {
        await withCheckedContinuation { (waiter: CheckedContinuation<Result<Void, any Error>?, Never>) in
            race(start) { waiter.resume(returning: $0) }
        }
    }

    /// `statement`'s value, or `ChannelError.ioOnClosedChannel` (a connection loss) once the
    /// connection's close has completed first: a statement PostgresNIO 1.x writes after the close
    /// is never answered, and the task left waiting for it holds nothing else.
    func answered<T: Sendable>(_ statement: @escaping @Sendable () async throws -> T) async throws -> T {
        let value = Box<T>()
        let outcome = await outcome { report in
            Task {
                do {
                    value.set(try await statement())
                    report(.success(()))
                } catch {
                    report(.failure(error))
                }
            }
        }
        switch outcome {
        case nil: throw ChannelError.ioOnClosedChannel
        case .failure(let error)?: throw error
        case .success?: return value.get()!
        }
    }

    /// ``answered(_:)`` for a statement's future: its value, or a connection loss once the
    /// connection's close has completed first.
    func answered<T: Sendable>(_ future: EventLoopFuture<T>) async throws -> T {
        let value = Box<T>()
        let outcome = await outcome { report in
            future.whenComplete { result in
                switch result {
                case .success(let v):
                    value.set(v)
                    report(.success(()))
                case .failure(let error): report(.failure(error))
                }
            }
        }
        switch outcome {
        case nil: throw ChannelError.ioOnClosedChannel
        case .failure(let error)?: throw error
        case .success?: return value.get()!
        }
    }

    /// A value set by one task and read by another after it said so.
    private final class Box<T: Sendable>: Sendable {
        private let value = Mutex<T?>(nil)
        func set(_ v: T) { value.withLock { $0 = v } }
        func get() -> T? { value.withLock { $0 } }
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
        for done in waiting { done(nil) }
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
