import FetchCastTrace
import Testing

struct BoundedQueueTests {
    /// A queue freed with items still in it (its consumer gone before the end, as an append
    /// whose transaction failed as it began) is freed quietly: libdispatch stops the process when
    /// a semaphore is freed below its initial value ("Semaphore object deallocated while in
    /// use"), which crashed `serve` on a POST during a database outage.
    @Test func aQueueFreedWithItemsInItIsFreedQuietly() {
        var queue: BoundedQueue<Int>? = BoundedQueue(capacity: 4)
        queue?.put(1)
        queue?.put(2)
        #expect(queue?.take() == 1)
        queue = nil
        #expect(queue == nil)
    }
}
