import FetchCastPredict
import FetchCastStore
import Synchronization

/// One connection to the store and the repository over it (a reader's, the writer's, the
/// check's or the warm-up's), lent to one task at a time by its ``StoreConnections``.
final class StoreConnection: @unchecked Sendable {
    // Unchecked: the store keeps its transaction's state and the repository its caches without a
    // lock; ``StoreConnections`` lends each connection to one task at a time and takes it back
    // before lending it again, which the compiler cannot see.
    let store: any ServiceStore
    let repository: ModelRepository

    init(store: any ServiceStore, repository: ModelRepository) {
        self.store = store
        self.repository = repository
    }
}

/// The connections of one kind a service keeps open (its readers, its writer, ...): a task takes
/// one, uses it alone and gives it back; a new one is opened when none is free, up to `limit` in
/// use at once, beyond which a task waits for one given back, in the order the tasks came (a
/// waiting task holds no thread).
final class StoreConnections: Sendable {
    private let open: @Sendable () async throws -> StoreConnection
    private let limit: Int?
    private let state: Mutex<State>

    private struct State {
        var idle: [StoreConnection]
        /// Connections in use, and turns handed to waiters not yet resumed.
        var lent = 0
        var waiting: [CheckedContinuation<Void, Never>] = []

        /// Takes a turn when one is free and nobody waits for one.
        mutating func takeTurn(limit: Int?) -> Bool {
            guard limit.map({ lent < $0 }) ?? true, waiting.isEmpty else { return false }
            lent += 1
            return true
        }
    }

    /// Connections opened by `open` as they are needed.
    /// - Parameters:
    ///   - limit: The most in use at once; `nil`: as many as are asked for at once.
    ///   - opened: One opened already (the writer's, opened with the service).
    init(limit: Int?, opened: StoreConnection? = nil, open: @escaping @Sendable () async throws -> StoreConnection) {
        self.open = open
        self.limit = limit.map { max(1, $0) }
        state = Mutex(State(idle: opened.map { [$0] } ?? []))
    }

    /// Runs `body` with a connection of its own.
    func with<T>(_ body: (StoreConnection) async throws -> T) async throws -> T {
        let connection = try await take()
        let result = await Result(awaiting: { try await body(connection) })
        giveBack(connection)
        return try result.get()
    }

    /// A connection for the calling task alone until it gives it back (``giveBack(_:)``).
    func take() async throws -> StoreConnection {
        if !state.withLock({ $0.takeTurn(limit: limit) }) {
            await withCheckedContinuation { (turn: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state in
                    if state.takeTurn(limit: limit) { return true }
                    state.waiting.append(turn)
                    return false
                }
                if now { turn.resume() }
            }
        }
        if let idle = state.withLock({ $0.idle.popLast() }) { return idle }
        do {
            return try await open()
        } catch {
            giveUpTurn()
            throw error
        }
    }

    /// Takes `connection` back: the first waiting task gets its turn.
    func giveBack(_ connection: StoreConnection) {
        state.withLock { $0.idle.append(connection) }
        giveUpTurn()
    }

    private func giveUpTurn() {
        let next: CheckedContinuation<Void, Never>? = state.withLock { state in
            guard !state.waiting.isEmpty else {
                state.lent -= 1
                return nil
            }
            return state.waiting.removeFirst()  // the turn passes on: `lent` stays
        }
        next?.resume()
    }
}
