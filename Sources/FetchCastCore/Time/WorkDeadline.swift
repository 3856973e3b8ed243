import Synchronization

/// When the work of one request is abandoned: at an instant (its deadline), or sooner when
/// someone stops it (the server shuts down, the client went away).
///
/// Long loops ask ``checkCurrent()`` every few thousand steps, as async code asks
/// `Task.checkCancellation()`: the deadline of the work running on this thread is bound with
/// ``run(_:)`` (a task-local value, which synchronous code on a pool thread sees too), so the
/// loops need no parameter and run unbounded when nothing is bound (the command line).
package final class WorkDeadline: Sendable {
    /// The deadline of the work running here, if any.
    @TaskLocal package static var current: WorkDeadline?

    /// How long the work may run, from its start.
    package let limit: Duration
    private let instant: ContinuousClock.Instant
    private let stopped = Atomic<Bool>(false)

    /// A deadline `limit` after `start`.
    package init(limit: Duration, from start: ContinuousClock.Instant = .now) {
        self.limit = limit
        instant = start + limit
    }

    /// How long until the deadline (negative once past it).
    package var remaining: Duration { instant - ContinuousClock.now }

    /// Stops the work at its next check.
    package func stop() { stopped.store(true, ordering: .relaxed) }

    /// Why the work must end now, if it must.
    package var reason: WorkStopped? {
        if stopped.load(ordering: .relaxed) { return .stopped }
        return ContinuousClock.now > instant ? .pastDeadline(limit) : nil
    }

    /// Runs `body` with this deadline bound for its checks.
    package func run<T>(_ body: () throws -> T) rethrows -> T {
        try Self.$current.withValue(self) { try body() }
    }

    /// Throws when the work running here is past its deadline or stopped; does nothing when no
    /// deadline is bound.
    /// - Complexity: a thread-local read and, with a deadline, a clock read (tens of
    ///   nanoseconds): call it every thousand or so steps of a loop, not every step.
    package static func checkCurrent() throws(WorkStopped) {
        if let reason = current?.reason { throw reason }
    }
}

/// Work abandoned by its ``WorkDeadline``.
package enum WorkStopped: Error, Sendable, Equatable {
    /// It ran longer than the limit.
    case pastDeadline(Duration)
    /// It was stopped before its deadline.
    case stopped
}
