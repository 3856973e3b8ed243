import Dispatch
import FetchCastCore

/// Events produced on a thread of their own, handed to the caller in batches through a
/// ``BoundedQueue``, so that reading and parsing overlap with whatever the caller does with the
/// events (ingest's inserts, the replay's spooling, a model's fold).
///
/// The one event pipeline in FetchCast: fed by a trace file (``TraceReader``) or by the
/// store's scans (its time-ordered scan for the replay, its id-ordered scan for the models),
/// any ``EventProducer``. The producer's ``SymbolTable`` is touched by the producing thread
/// only: each batch carries the names interned while it was produced, so the consumer mirrors
/// them in order. A trace's content hash is the reader's, computed as the bytes went by, and
/// arrives with the end.
package final class EventSource<Producer: EventProducer>: Sendable {
    /// What ``next()`` returns.
    package enum Item: Sendable {
        case batch(EventBatch)
        /// Everything was produced; the producer's summary (a trace's hash).
        case end(Producer.Summary)
        case failure(Producer.Failure)
    }

    private let queue: BoundedQueue<Item>

    /// Starts producing on a thread of its own.
    /// - Parameters:
    ///   - producer: Used by the producing thread only from now on.
    ///   - batchSize: Events per batch at most.
    ///   - capacity: Batches produced ahead at most.
    ///   - collectRejects: Skip invalid rows and pass them along (else the first one fails).
    package init(_ producer: Producer, batchSize: Int, capacity: Int, collectRejects: Bool = false) {
        queue = BoundedQueue(capacity: capacity)
        let handoff = Handoff(producer)
        let queue = self.queue
        DispatchQueue.global().async {
            Self.produce(handoff.value, into: queue, batchSize: batchSize, collectRejects: collectRejects)
        }
    }

    private static func produce(_ producer: Producer, into queue: BoundedQueue<Item>, batchSize: Int, collectRejects: Bool) {
        let symbols = producer.symbolTable
        var namesSent = symbols?.count ?? 0
        var rejects: [EventBatch.Reject] = []
        do throws(Producer.Failure) {
            while !queue.isCancelled {
                var batch: [EncodedEvent] = []
                batch.reserveCapacity(batchSize)
                let more = try producer.next(
                    into: &batch, maxCount: batchSize,
                    onInvalid: collectRejects ? { error, text in rejects.append(EventBatch.Reject(error: error, text: text)) } : nil)
                var newNames: [String] = []
                if let symbols, symbols.count > namesSent {
                    newNames = (namesSent..<symbols.count).map { symbols.name(Int32($0)) }
                    namesSent = symbols.count
                }
                if !batch.isEmpty || !rejects.isEmpty || !newNames.isEmpty {
                    queue.put(.batch(EventBatch(
                        events: batch, newNames: newNames, rejects: rejects, bytesRead: producer.bytesRead, file: producer.batchFile)))
                    rejects = []
                }
                if !more { break }
            }
        } catch {
            _ = producer.finish()
            queue.put(.failure(error))
            return
        }
        queue.put(.end(producer.finish()))
    }

    /// The next batch, or the end, or the failure that ended the input (blocks until one is
    /// ready). Call it no more after an end or a failure.
    package func next() -> Item { queue.take() }

    /// Stops the producer early and waits until it has let go of its input. Call it at most
    /// once, and only before ``next()`` returned an end or a failure.
    package func cancel() {
        queue.cancel()
        while true {
            switch queue.take() {
            case .batch: continue
            case .end, .failure: return
            }
        }
    }
}

/// Events an ``EventSource`` produced since its previous batch.
package struct EventBatch: Sendable {
    /// A row the producer refused, with why.
    package struct Reject: Sendable {
        package var error: TraceError
        package var text: String
    }

    package var events: [EncodedEvent]
    /// Names interned while this batch was produced, in symbol order.
    package var newNames: [String]
    /// Rows refused, with their text (only when the source collects rejects).
    package var rejects: [Reject]
    /// Raw bytes read so far.
    package var bytesRead: Int64
    /// The file the events came from, when the producer reads several (the store's scans).
    package var file: String?
}

extension EventSource {
    /// Calls `body` with each batch's events until the end, and returns the producer's summary.
    /// When `body` throws, the producer is stopped (and has let go of its input) before the
    /// error is rethrown.
    /// - Throws: The producer's failure, or `body`'s error.
    package func forEachBatch(_ body: (EventBatch) throws -> Void) throws -> Producer.Summary {
        while true {
            switch next() {
            case .batch(let batch):
                do { try body(batch) } catch {
                    cancel()
                    throw error
                }
            case .end(let summary): return summary
            case .failure(let error): throw error
            }
        }
    }
}
