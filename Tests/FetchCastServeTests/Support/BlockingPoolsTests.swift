import Dispatch
import FetchCastCore
import FetchCastTestSupport
import NIOPosix
import Testing

@testable import FetchCastServe

/// A read is stopped with its request; a check of the store for the plans kept in memory is
/// not: other requests' plans wait for it.
struct BlockingPoolsTests {
    /// What `run` gives back when the task that called it is cancelled while its work runs: the
    /// work waits to be let go, then asks its deadline whether to stop.
    private func cancelledWhileRunning(_ run: @escaping @Sendable (@escaping @Sendable () throws -> Int) async throws -> Int) async throws -> Result<Int, any Error> {
        let started = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let task = Task { () -> Result<Int, any Error> in
            do {
                return .success(try await run {
                    started.signal()
                    release.wait()
                    try WorkDeadline.checkCurrent()
                    return 7
                })
            } catch {
                return .failure(error)
            }
        }
        try await offThread { started.wait() }
        task.cancel()
        release.signal()
        return await task.value
    }

    @Test func aCheckIsNotStoppedWithTheTaskThatRunsIt() async throws {
        let pools = BlockingPools(readThreads: 1)
        let check = try await cancelledWhileRunning { try await pools.check($0) }
        #expect(try check.get() == 7)
        let read = try await cancelledWhileRunning { try await pools.read($0) }
        #expect(throws: APIError.self, "a read stops with its request") { try read.get() }
        for pool in [pools.reads, pools.writes, pools.checks] { #expect(await pool.stop(within: .seconds(60))) }
    }

    /// Pools released without a stop (a `Planner` never shut down) end their threads: an NIO
    /// pool's threads hold the pool, so while any runs the pool is not freed.
    @Test(.timeLimit(.minutes(1))) func poolsReleasedWithoutAStopEndTheirThreads() async throws {
        weak var reads: NIOThreadPool?, writes: NIOThreadPool?, checks: NIOThreadPool?
        do {
            let pools = BlockingPools(readThreads: 3, deadline: nil)
            #expect(try await pools.read { 1 } == 1)
            (reads, writes, checks) = (pools.reads, pools.writes, pools.checks)
        }
        while reads != nil || writes != nil || checks != nil { try await Task.sleep(for: .milliseconds(10)) }
        let stopped = BlockingPools(readThreads: 1, deadline: nil)
        #expect(await stopped.stop(), "stopped, then released: not stopped again")
    }
}
