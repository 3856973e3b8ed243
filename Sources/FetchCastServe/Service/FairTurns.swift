import Dispatch
import Synchronization

/// At most `count` holders at once, and waiters served in the order they came (a
/// `DispatchSemaphore` wakes any of them: under load a reader could wait for many turns).
final class FairTurns: Sendable {
    private let state: Mutex<(free: Int, waiting: [DispatchSemaphore])>

    init(count: Int) { state = Mutex((max(1, count), [])) }

    /// Takes a turn, waiting behind those who came first.
    func take() {
        let wait: DispatchSemaphore? = state.withLock { state in
            if state.free > 0 && state.waiting.isEmpty {
                state.free -= 1
                return nil
            }
            let semaphore = DispatchSemaphore(value: 0)
            state.waiting.append(semaphore)
            return semaphore
        }
        wait?.wait()
    }

    /// Gives a turn back: to the first waiting, if any.
    func giveBack() {
        let next: DispatchSemaphore? = state.withLock { state in
            guard !state.waiting.isEmpty else {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.signal()
    }
}
