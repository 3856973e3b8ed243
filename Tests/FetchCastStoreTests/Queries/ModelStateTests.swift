import Testing
@testable import FetchCastStore
import FetchCastTestSupport

struct ModelStateTests {
    @Test func readingInPlaceMatchesACopyAndHoldsNoLock() async throws {
        let t = try TemporaryStore()
        let store = try t.open()
        let big = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try store.saveModelStates([Store.ModelStateRecord(key: "device:1", watermark: 7, state: big),
                                  Store.ModelStateRecord(key: "empty", watermark: 8, state: [])])
        for _ in 0..<3 {  // the statement is cached: reuse must read the new binding each time
            #expect(try store.withModelState(key: "device:1") { w, bytes in w == 7 && Array(bytes) == big } == true)
            #expect(try store.withModelState(key: "empty") { w, bytes in w == 8 && bytes.isEmpty } == true)
            #expect(try store.withModelState(key: "missing") { _, _ in true } == nil)
        }
        await #expect(try store.modelState(key: "device:1")?.state == big)
        // Another connection can still write: the cached statement was reset, no read is pending.
        let other = try t.open(create: false)
        try other.saveModelStates([Store.ModelStateRecord(key: "device:1", watermark: 9, state: [1, 2])])
        await #expect(try store.modelState(key: "device:1") == Store.ModelStateRecord(key: "device:1", watermark: 9, state: [1, 2]))
    }
}
