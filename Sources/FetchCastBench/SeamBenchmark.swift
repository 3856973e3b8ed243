import Dispatch
import FetchCastCore
import FetchCastServe
import FetchCastStore

/// `fetchcast bench seam`: what one read of the model state (a device's row, by key, from an
/// SQLite store) costs called directly; through the asynchronous seam the model layer calls
/// (`any ModelStore`, awaited) from a task on the server's read thread, as a plan reads; and
/// through an actor on an executor of its own, one hop a read and a batch of reads a hop (the
/// shape the seam does not take: issue 41). The direct read is the reference, measured in the
/// same run.
package enum SeamBenchmark {
    /// One measurement, in microseconds a read (the fastest of the runs of each).
    package struct Result: Sendable {
        package var reads = 0
        package var batch = 0
        package var direct = 0.0
        package var seam = 0.0
        package var hopEach = 0.0
        package var batched = 0.0
    }

    /// Keys read (1,000 rows of 200 bytes, round robin).
    static let rows = 1000

    /// Reads `reads` rows each way `repeats` times in a store made in `directory`.
    package static func run(directory: String, reads: Int = 200_000, batch: Int = 100, repeats: Int = 3) async throws -> Result {
        let path = directory + "/seam.sqlite"
        let store = try Store(path: path, create: true)
        let keys = (0..<rows).map { "device:\($0)" }
        try store.writeTransaction {
            try store.saveModelStates(keys.map { ModelStateRecord(key: $0, watermark: 1, state: Array(repeating: 7, count: 200)) })
        }
        var result = Result(reads: reads, batch: batch, direct: .infinity, seam: .infinity, hopEach: .infinity, batched: .infinity)
        let reader = try Reader(path: path, keys: keys)
        let pools = BlockingPools(readThreads: 1, deadline: nil)
        defer { Task { _ = await pools.stop() } }
        for _ in 0..<max(1, repeats) {
            let started = WallClock.monotonic()
            var bytes = 0
            for i in 0..<reads { bytes += try store.withModelState(key: keys[i % rows]) { _, state in state.count } ?? 0 }
            result.direct = min(result.direct, (WallClock.monotonic() - started) / Double(reads) * 1e6)
            guard bytes == reads * 200 else { throw Failure(description: "read \(bytes) bytes, expected \(reads * 200)") }
            let seam = try await pools.read {
                let store: any ModelStore = try Store(path: path, create: false)
                let started = WallClock.monotonic()
                var bytes = 0
                for i in 0..<reads { bytes += try await store.withModelState(key: keys[i % rows]) { _, state in state.count } ?? 0 }
                guard bytes == reads * 200 else { throw Failure(description: "read \(bytes) bytes through the seam") }
                return (WallClock.monotonic() - started) / Double(reads) * 1e6
            }
            result.seam = min(result.seam, seam)
            let (hopEach, batched) = try await {
                var started = WallClock.monotonic()
                var bytes = 0
                for i in 0..<reads { bytes += try await reader.read(i) }
                let hopEach = (WallClock.monotonic() - started) / Double(reads) * 1e6
                started = WallClock.monotonic()
                for first in stride(from: 0, to: reads, by: batch) { bytes += try await reader.read(first..<min(reads, first + batch)) }
                let batched = (WallClock.monotonic() - started) / Double(reads) * 1e6
                guard bytes == 2 * reads * 200 else { throw Failure(description: "read \(bytes) bytes through the actor") }
                return (hopEach, batched)
            }()
            (result.hopEach, result.batched) = (min(result.hopEach, hopEach), min(result.batched, batched))
        }
        return result
    }

    /// A store on a serial queue of its own, read through an actor.
    private actor Reader {
        private let executor = QueueExecutor()
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
        private let store: Store
        private let keys: [String]

        init(path: String, keys: [String]) throws {
            store = try Store(path: path, create: false)
            self.keys = keys
        }

        func read(_ i: Int) throws -> Int {
            try store.withModelState(key: keys[i % keys.count]) { _, state in state.count } ?? 0
        }

        func read(_ range: Range<Int>) throws -> Int {
            try range.reduce(0) { try $0 + read($1) }
        }
    }

    /// Runs an actor's jobs on a serial Dispatch queue.
    private final class QueueExecutor: SerialExecutor {
        private let queue = DispatchQueue(label: "fetchcast.bench.seam")

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
        }

        func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }
}
