import Dispatch
import Synchronization

/// Runs async work to its end from a thread that may block (a CLI command's, not a task's).
package enum Blocking {
    package static func wait<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let box = Box<T>()
        Task.detached {
            do { box.set(.success(try await operation())) } catch { box.set(.failure(error)) }
            done.signal()
        }
        done.wait()
        return try box.get()!.get()
    }

    /// ``wait(_:)``, given up once `isLost` has answered `true` for `grace` on end: then its
    /// task is cancelled and `lost` is thrown.
    ///
    /// For a statement PostgreSQL will never answer: PostgresNIO (1.x) drops a statement sent on
    /// a connection whose close has completed, and its task then waits for ever. Such a task
    /// does nothing more (what it waits for is gone); one still running stops at its next
    /// cancellation check, and a `COPY` of it never calls its writer on a closed connection
    /// (``CopyStream``).
    package static func wait<T: Sendable>(
        _ operation: @escaping @Sendable () async throws -> T, givingUpAfter grace: Double, of isLost: () -> Bool, throwing lost: () -> any Error
    ) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let box = Box<T>()
        let task = Task.detached {
            let result: Result<T, any Error>
            do { result = .success(try await operation()) } catch { result = .failure(error) }
            box.set(result)
            done.signal()
        }
        var lostSince: DispatchTime?
        while done.wait(timeout: .now() + .milliseconds(100)) == .timedOut {
            guard isLost() else {
                lostSince = nil
                continue
            }
            let since = lostSince ?? .now()
            lostSince = since
            if DispatchTime.now().uptimeNanoseconds - since.uptimeNanoseconds > UInt64(grace * 1e9) {
                task.cancel()
                throw lost()
            }
        }
        return try box.get()!.get()
    }

    /// The result, written by the task before it signals and read after the wait (under a
    /// lock: a wait given up may end while the task still runs).
    private final class Box<T: Sendable>: Sendable {
        private let result = Mutex<Result<T, any Error>?>(nil)
        func set(_ r: Result<T, any Error>) { result.withLock { $0 = r } }
        func get() -> Result<T, any Error>? { result.withLock { $0 } }
    }
}
