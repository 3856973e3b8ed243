import Testing
@testable import FetchCastPredict

/// The byte-bounded, least-recently-used bookkeeping behind the model and scheduler caches.
struct BoundedCacheTests {
    @Test func dropsTheLeastRecentlyUsedToStayWithinItsCapacity() {
        var cache = BoundedCache<Int, String>(capacityBytes: 30)
        cache.keep("a", for: 1, cost: 10)
        cache.keep("b", for: 2, cost: 10)
        cache.keep("c", for: 3, cost: 10)
        #expect(cache.value(for: 1) == "a")  // 1 is now the most recently used
        #expect(cache.keep("d", for: 4, cost: 10) == ["b"], "returns what it drops, for release outside a lock")
        #expect(cache.value(for: 2) == nil)
        #expect(cache.value(for: 1) == "a" && cache.value(for: 3) == "c" && cache.value(for: 4) == "d")
        #expect(cache.count == 3 && cache.bytes == 30)
    }

    @Test func replacingAValueCountsItsNewCostOnce() {
        var cache = BoundedCache<Int, String>(capacityBytes: 30)
        cache.keep("a", for: 1, cost: 10)
        #expect(cache.keep("a2", for: 1, cost: 20) == ["a"])
        #expect(cache.value(for: 1) == "a2" && cache.count == 1 && cache.bytes == 20)
        cache.keep("too big", for: 2, cost: 31)
        #expect(cache.value(for: 2) == nil && cache.bytes == 20, "a value costing more than the capacity is not kept")
        cache.removeAll()
        #expect(cache.count == 0 && cache.bytes == 0 && cache.value(for: 1) == nil)
    }

    @Test func manyUsesKeepTheOrderExact() {
        // Thousands of uses of a few keys (the order list compacts) still drop the right one.
        var cache = BoundedCache<Int, Int>(capacityBytes: 3)
        for k in 0..<3 { cache.keep(k, for: k, cost: 1) }
        for i in 0..<5_000 { _ = cache.value(for: [0, 2][i % 2]) }
        cache.keep(9, for: 9, cost: 1)
        #expect(cache.value(for: 1) == nil)
        #expect(cache.value(for: 0) == 0 && cache.value(for: 2) == 2 && cache.value(for: 9) == 9)
    }
}
