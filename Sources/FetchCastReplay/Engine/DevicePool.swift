import Foundation
import Synchronization

/// Runs independent per-device jobs on a fixed number of threads; each result lands in its own
/// slot, so the outcome does not depend on scheduling.
enum DevicePool {
    /// Calls `body(i)` for every `i` in `order` (the order jobs are started in) on `threads`
    /// threads; returns the results indexed by `i`.
    ///
    /// With `report`, the jobs run on other threads and the calling thread calls `report()`
    /// every `interval` seconds until they are done (progress lines stay on the caller's thread).
    static func map<T: Sendable>(
        count: Int, order: [Int], threads: Int, report: (() -> Void)? = nil, interval: Double = 0.5,
        _ body: @escaping @Sendable (Int) -> T
    ) -> [T] {
        let slots = Slots<T>(count: count)
        let run: @Sendable () -> Void = {
            if threads <= 1 || count <= 1 {
                for i in order { slots.set(i, body(i)) }
            } else {
                let next = Counter()
                DispatchQueue.concurrentPerform(iterations: min(threads, count)) { _ in
                    while let k = next.take(limit: order.count) {
                        let i = order[k]
                        slots.set(i, body(i))
                    }
                }
            }
        }
        guard let report else {
            run()
            return slots.values()
        }
        let finished = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            run()
            finished.signal()
        }
        while finished.wait(timeout: .now() + interval) == .timedOut { report() }
        return slots.values()
    }
}

/// A shared job counter.
private final class Counter: Sendable {
    private let value = Mutex(0)
    func take(limit: Int) -> Int? {
        value.withLock { v in
            guard v < limit else { return nil }
            v += 1
            return v - 1
        }
    }
}

/// One result slot per job; each slot is written by exactly one thread (once per device: the
/// lock is not contended).
private final class Slots<T: Sendable>: Sendable {
    private let storage: Mutex<[T?]>
    init(count: Int) { storage = Mutex(Array(repeating: nil, count: count)) }
    func set(_ i: Int, _ value: T) { storage.withLock { $0[i] = value } }
    func values() -> [T] { storage.withLock { $0.map { $0! } } }
}
