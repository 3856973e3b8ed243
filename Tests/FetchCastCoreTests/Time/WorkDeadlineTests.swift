@testable import FetchCastCore
import Testing

struct WorkDeadlineTests {
    @Test func withoutADeadlineBoundChecksPass() throws {
        try WorkDeadline.checkCurrent()
    }

    @Test func aPassedDeadlineStopsTheWorkBoundToIt() {
        let deadline = WorkDeadline(limit: .milliseconds(5), from: .now - .seconds(1))
        #expect(throws: WorkStopped.pastDeadline(.milliseconds(5))) { try deadline.run { try WorkDeadline.checkCurrent() } }
        // Only while bound.
        #expect(throws: Never.self) { try WorkDeadline.checkCurrent() }
    }

    @Test func stoppingEndsTheWorkBeforeItsDeadline() {
        let deadline = WorkDeadline(limit: .seconds(3600))
        #expect(throws: Never.self) { try deadline.run { try WorkDeadline.checkCurrent() } }
        deadline.stop()
        #expect(throws: WorkStopped.stopped) { try deadline.run { try WorkDeadline.checkCurrent() } }
    }
}
