import NIOPosix
import Synchronization

extension NIOThreadPool {
    /// Asks the pool to stop once the work it runs has ended, and waits for that at most
    /// `bound` (less when the calling task is cancelled); whether it stopped.
    ///
    /// At shutdown the work still running is derived (a fold, a warm-up pass: the next start
    /// does it again) and its transaction, cut short by the process's exit, leaves the store as
    /// it was. Waiting for it without a bound held a loaded server's SIGTERM past
    /// ServiceLifecycle's limit, which then stopped the process with a fatal error (exit 4).
    func stop(within bound: Duration) async -> Bool {
        let stopped = StopFlag()
        shutdownGracefully { _ in stopped.set() }
        let deadline = ContinuousClock.now + bound
        while !stopped.isSet, ContinuousClock.now < deadline {
            do { try await Task.sleep(for: .milliseconds(10)) } catch { break }  // cancelled: stop waiting
        }
        return stopped.isSet
    }
}

/// Set once, from any thread.
private final class StopFlag: Sendable {
    private let value = Atomic(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}
