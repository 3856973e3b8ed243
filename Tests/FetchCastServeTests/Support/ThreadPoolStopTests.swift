import Dispatch
import NIOPosix
import Testing

@testable import FetchCastServe

/// A stop at shutdown waits for running work only up to its bound (a loaded server's fold held
/// SIGTERM past ServiceLifecycle's limit, which ended the process with a fatal error).
struct ThreadPoolStopTests {
    @Test func anIdlePoolStopsAtOnce() async {
        let pool = NIOThreadPool(numberOfThreads: 2)
        pool.start()
        // Nothing runs, so it stops however long the bound (no timing asserted: the machine is
        // shared and the cooperative pool may be busy with other suites).
        #expect(await pool.stop(within: .seconds(3600)))
    }

    @Test func workThatEndsWithinTheBoundIsWaitedFor() async {
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        let ran = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        pool.submit { _ in
            started.signal()
            usleep(200_000)
            ran.signal()
        }
        started.wait()  // running (work not yet started when the pool stops is never run)
        #expect(await pool.stop(within: .seconds(3600)))
        #expect(ran.wait(timeout: .now()) == .success, "the work ended before the pool said it stopped")
    }

    @Test func workStillRunningAtTheBoundIsLeftRunning() async {
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        let release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        pool.submit { _ in
            started.signal()
            release.wait()
        }
        started.wait()
        let asked = ContinuousClock.now
        #expect(await !pool.stop(within: .milliseconds(300)))
        // It waited the bound before giving up (only the lower bound is certain on a loaded machine).
        #expect(ContinuousClock.now - asked >= .milliseconds(300))
        release.signal()
    }
}
