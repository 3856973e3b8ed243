import Dispatch
import Synchronization

/// A bounded single-producer, single-consumer queue between a thread that makes items and one
/// that uses them (a parser and a writer, say), so the two overlap while memory stays bounded.
/// The one such queue in FetchCast; ``EventSource`` is built on it.
package final class BoundedQueue<Item: Sendable>: Sendable {
    private let items = Mutex<[Item]>([])
    private let filled = DispatchSemaphore(value: 0)
    private let free: DispatchSemaphore
    private let cancelled = Mutex(false)

    /// Creates a queue holding at most `capacity` items.
    package init(capacity: Int) {
        free = DispatchSemaphore(value: capacity)
    }

    /// A queue freed with items in it (its consumer gone before the end) gives their places
    /// back first: libdispatch stops the process when a semaphore is freed with a value below
    /// the one it was created with ("Semaphore object deallocated while in use").
    deinit {
        for _ in 0..<items.withLock({ $0.count }) { free.signal() }
    }

    /// Adds an item, waiting while the queue is full.
    package func put(_ item: Item) {
        free.wait()
        items.withLock { $0.append(item) }
        filled.signal()
    }

    /// Takes the oldest item, waiting while the queue is empty.
    package func take() -> Item {
        filled.wait()
        let item = items.withLock { $0.removeFirst() }
        free.signal()
        return item
    }

    /// Asks the producer to stop early (it checks ``isCancelled`` between items).
    package func cancel() { cancelled.withLock { $0 = true } }

    /// Whether the consumer asked to stop.
    package var isCancelled: Bool { cancelled.withLock { $0 } }
}

/// Moves a value that one thread at a time uses across a thread boundary, where the compiler
/// cannot see that the threads take turns (a reader handed to its parsing thread, per-device
/// state handed to the worker that owns the device).
package final class Handoff<Value>: @unchecked Sendable {
    package let value: Value
    package init(_ value: Value) { self.value = value }
}
