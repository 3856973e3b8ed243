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
        let started = ContinuousClock.now
        #expect(await pool.stop(within: .seconds(5)))
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    @Test func workThatEndsWithinTheBoundIsWaitedFor() async {
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        let ran = DispatchSemaphore(value: 0)
        pool.submit { _ in
            usleep(200_000)
            ran.signal()
        }
        #expect(await pool.stop(within: .seconds(30)))
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
        let waited = ContinuousClock.now - asked
        #expect(waited >= .milliseconds(300) && waited < .seconds(20), "\(waited)")
        release.signal()
    }
}
