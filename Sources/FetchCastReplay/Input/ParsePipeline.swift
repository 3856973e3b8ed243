import Dispatch
import FetchCastTrace
import Foundation

/// Parses a trace file on a second thread while the caller consumes the batches, so that
/// decompression and parsing overlap with pass 1's bookkeeping and spooling.
///
/// The reader's ``SymbolTable`` is touched by the parsing thread only: each batch carries the
/// names interned while it was parsed, so the consumer can mirror them.
final class ParsePipeline: @unchecked Sendable {
    enum Message {
        case batch([EncodedEvent], newNames: [String], bytesRead: Int64)
        case end(sha256: String?, bytesRead: Int64)
        case failure(TraceError)
    }

    private let lock = NSLock()
    private var queue: [Message] = []
    private var head = 0
    private let filled = DispatchSemaphore(value: 0)
    private let free: DispatchSemaphore
    private var cancelled = false
    private let done = DispatchGroup()

    /// Starts parsing `reader` on a background thread.
    init(reader: TraceReader, batchSize: Int = 4096, capacity: Int = 8) {
        free = DispatchSemaphore(value: capacity)
        let box = UncheckedBox(reader)
        done.enter()
        Thread.detachNewThread { [self] in
            produce(box.value, batchSize: batchSize)
            done.leave()
        }
    }

    private func produce(_ reader: TraceReader, batchSize: Int) {
        let symbols = reader.symbols
        var known = symbols.count
        while !isCancelled {
            var batch: [EncodedEvent] = []
            batch.reserveCapacity(batchSize)
            let more: Bool
            do {
                more = try reader.next(into: &batch, maxCount: batchSize)
            } catch {
                put(.failure(error))
                return
            }
            if !batch.isEmpty || symbols.count > known {
                let names = (known..<symbols.count).map { symbols.name(Int32($0)) }
                known = symbols.count
                put(.batch(batch, newNames: names, bytesRead: reader.bytesRead))
            }
            if !more { break }
        }
        put(.end(sha256: isCancelled ? nil : reader.sha256, bytesRead: reader.bytesRead))
    }

    private var isCancelled: Bool {
        lock.lock()
        defer { lock.unlock() }
        return cancelled
    }

    private func put(_ m: Message) {
        free.wait()
        lock.lock()
        queue.append(m)
        lock.unlock()
        filled.signal()
    }

    /// The next message (blocks until one is ready).
    func take() -> Message {
        filled.wait()
        lock.lock()
        let m = queue[head]
        head += 1
        if head > 64 { queue.removeFirst(head); head = 0 }
        lock.unlock()
        free.signal()
        switch m {
        case .end, .failure: done.wait()
        case .batch: break
        }
        return m
    }

    /// Stops the parser early and waits for it to finish.
    func cancel() {
        lock.lock()
        cancelled = true
        lock.unlock()
        while true {
            switch take() {
            case .batch: continue
            case .end, .failure: return
            }
        }
    }
}
