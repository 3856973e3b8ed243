import Dispatch
import Foundation
import NIOPosix
import Testing

@testable import FetchCastServe

/// A stop at shutdown waits for running work only up to its bound (a loaded server's fold held
/// SIGTERM past ServiceLifecycle's limit, which ended the process with a fatal error).
struct ThreadPoolStopTests {
    /// A one-thread pool running `body`, once it has started (work not yet started when a pool
    /// stops is never run).
    private func poolRunning(_ body: @escaping @Sendable () -> Void) -> NIOThreadPool {
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        let started = DispatchSemaphore(value: 0)
        pool.submit { _ in
            started.signal()
            body()
        }
        started.wait()
        return pool
    }

    @Test func anIdlePoolStops() async {
        let pool = NIOThreadPool(numberOfThreads: 2)
        pool.start()
        // Nothing runs, so it stops however long the bound (no timing asserted: the machine is
        // shared and the cooperative pool may be busy with other suites).
        #expect(await pool.stop(within: .seconds(3600)))
    }

    @Test func workThatEndsWithinTheBoundIsWaitedFor() async {
        let ran = DispatchSemaphore(value: 0)
        let pool = poolRunning {
            usleep(200_000)
            ran.signal()
        }
        #expect(await pool.stop(within: .seconds(3600)))
        #expect(ran.wait(timeout: .now()) == .success, "the work ended before the pool said it stopped")
    }

    @Test func workStillRunningAtTheBoundIsLeftRunning() async {
        let release = DispatchSemaphore(value: 0)
        let pool = poolRunning { release.wait() }
        let asked = ContinuousClock.now
        #expect(await !pool.stop(within: .milliseconds(300)))
        // It waited the bound before giving up (only the lower bound is certain on a loaded machine).
        #expect(ContinuousClock.now - asked >= .milliseconds(300))
        release.signal()
    }
}
