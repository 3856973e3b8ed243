import Synchronization

/// Lets one read per device run at a time: the other requests for that device wait here,
/// holding no reader thread, so that one device asked many times at once (or one whose plans
/// are slow) cannot take every reader while the other devices' requests queue behind it.
final class DeviceGate: Sendable {
    /// The devices with a read running, and who waits for each (in arrival order).
    private let waiting = Mutex<[String: [CheckedContinuation<Void, Never>]]>([:])

    /// Runs `body` once no other read of `device` runs.
    func run<T: Sendable>(_ device: String, _ body: () async throws -> T) async throws -> T {
        await enter(device)
        defer { leave(device) }
        return try await body()
    }

    private func enter(_ device: String) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = waiting.withLock { waiting -> Bool in
                guard waiting[device] != nil else {
                    waiting[device] = []
                    return true
                }
                waiting[device]!.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    private func leave(_ device: String) {
        let next = waiting.withLock { waiting -> CheckedContinuation<Void, Never>? in
            guard var queue = waiting[device], !queue.isEmpty else {
                waiting[device] = nil
                return nil
            }
            let first = queue.removeFirst()
            waiting[device] = queue
            return first
        }
        next?.resume()
    }
}
