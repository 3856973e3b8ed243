import Dispatch

/// A trace parsed on its own thread, handed to the caller in batches of events through a
/// ``BoundedQueue``, so that decompression and parsing overlap with whatever the caller does
/// with the events (ingest's inserts, the replay's spooling).
///
/// The reader's ``SymbolTable`` is touched by the parsing thread only: each batch carries the
/// names interned while it was parsed, so the consumer mirrors them in order. The content hash
/// is the reader's, computed as the bytes went by, and arrives with the end.
package final class EventSource: Sendable {
    /// Events parsed since the previous batch.
    package struct Batch: Sendable {
        package var events: [EncodedEvent]
        /// Names interned while this batch was parsed, in symbol order.
        package var newNames: [String]
        /// Rows refused, with their text (only when the source collects rejects).
        package var rejects: [Reject]
        /// Raw bytes read so far.
        package var bytesRead: Int64
    }

    /// A row the reader refused, with why.
    package struct Reject: Sendable {
        package var error: TraceError
        package var text: String
    }

    /// The whole input's identity, once it is read.
    package struct End: Sendable {
        /// The SHA-256 of the raw bytes.
        package var sha256: String
        package var bytesRead: Int64
        package var format: TraceFormat?
        package var isGzip: Bool
    }

    /// What ``next()`` returns.
    package enum Item: Sendable {
        case batch(Batch)
        case end(End)
        case failure(TraceError)
    }

    private let queue: BoundedQueue<Item>

    /// Starts parsing `reader` on a thread of its own.
    /// - Parameters:
    ///   - reader: The trace; used by the parsing thread only from now on.
    ///   - batchSize: Events per batch at most.
    ///   - capacity: Batches parsed ahead at most.
    ///   - collectRejects: Skip invalid rows and pass them along (else the first one fails).
    package init(reader: TraceReader, batchSize: Int, capacity: Int, collectRejects: Bool = false) {
        queue = BoundedQueue(capacity: capacity)
        let handoff = Handoff(reader)
        let queue = self.queue
        DispatchQueue.global().async {
            Self.produce(handoff.value, into: queue, batchSize: batchSize, collectRejects: collectRejects)
        }
    }

    private static func produce(_ reader: TraceReader, into queue: BoundedQueue<Item>, batchSize: Int, collectRejects: Bool) {
        let symbols = reader.symbols
        var namesSent = symbols.count
        var rejects: [Reject] = []
        do {
            while !queue.isCancelled {
                var batch: [EncodedEvent] = []
                batch.reserveCapacity(batchSize)
                let more = try reader.next(
                    into: &batch, maxCount: batchSize,
                    onInvalid: collectRejects ? { error, text in rejects.append(Reject(error: error, text: text)) } : nil)
                var newNames: [String] = []
                if symbols.count > namesSent {
                    newNames = (namesSent..<symbols.count).map { symbols.name(Int32($0)) }
                    namesSent = symbols.count
                }
                if !batch.isEmpty || !rejects.isEmpty || !newNames.isEmpty {
                    queue.put(.batch(Batch(events: batch, newNames: newNames, rejects: rejects, bytesRead: reader.bytesRead)))
                    rejects = []
                }
                if !more { break }
            }
            queue.put(.end(End(sha256: reader.sha256, bytesRead: reader.bytesRead, format: reader.format, isGzip: reader.isGzip)))
        } catch {
            queue.put(.failure(error))
        }
    }

    /// The next batch, or the end, or the failure that ended the input (blocks until one is
    /// ready). Call it no more after an end or a failure.
    package func next() -> Item { queue.take() }

    /// Stops the parser early and waits until it has let go of the reader. Call it at most
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
