import Dispatch
import Synchronization

/// A bounded single-producer, single-consumer queue between the parsing thread and the thread
/// that writes to SQLite, so decompression and parsing overlap with inserts.
final class BatchPipe<Item: Sendable>: Sendable {
    private let items = Mutex<[Item]>([])
    private let filled = DispatchSemaphore(value: 0)
    private let free: DispatchSemaphore
    private let cancelled = Mutex(false)

    init(capacity: Int) {
        free = DispatchSemaphore(value: capacity)
    }

    /// Adds an item, waiting while the queue is full.
    func put(_ item: Item) {
        free.wait()
        items.withLock { $0.append(item) }
        filled.signal()
    }

    /// Takes the oldest item, waiting while the queue is empty.
    func take() -> Item {
        filled.wait()
        let item = items.withLock { $0.removeFirst() }
        free.signal()
        return item
    }

    /// Asks the producer to stop early.
    func cancel() { cancelled.withLock { $0 = true } }

    /// Whether the consumer asked to stop.
    var isCancelled: Bool { cancelled.withLock { $0 } }
}

/// Moves a value that is used by one thread at a time across a thread boundary.
final class Handoff<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
