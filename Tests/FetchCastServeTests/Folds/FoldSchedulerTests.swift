import Synchronization
import Testing
@testable import FetchCastServe

/// A burst of ingests is folded once, after the delay; an ingest after that fold started
/// schedules the next.
struct FoldSchedulerTests {
    @Test func aBurstIsFoldedOnceAndALaterIngestAgain() async throws {
        let scheduler = FoldScheduler(delay: .milliseconds(300))
        let folds = Mutex(0)
        for _ in 0..<10 { scheduler.schedule { folds.withLock { $0 += 1 } } }
        #expect(folds.withLock { $0 } == 0, "not before the delay")
        try await waitUntil { folds.withLock { $0 } == 1 }
        try await Task.sleep(for: .milliseconds(400))
        #expect(folds.withLock { $0 } == 1, "ten ingests, one fold")

        scheduler.schedule { folds.withLock { $0 += 1 } }
        try await waitUntil { folds.withLock { $0 } == 2 }
    }

    /// Polls `condition` for up to 5 s.
    private func waitUntil(_ condition: () -> Bool) async throws {
        for _ in 0..<500 where !condition() { try await Task.sleep(for: .milliseconds(10)) }
        #expect(condition())
    }
}
