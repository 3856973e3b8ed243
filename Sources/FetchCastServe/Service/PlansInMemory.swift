import FetchCastPredict
import FetchCastStore
import Synchronization

/// Plans kept ahead, kept in this process's memory as well, for a store a round trip away
/// (PostgreSQL): a plan is answered from memory after one shared check of what changed.
///
/// Before answering, a request waits for a check of the store that *started after it
/// arrived* (``ModelRepository/changesSince(_:)``, one statement: the last event's number, the
/// prior epoch, and the devices of the files added since the previous check). One task runs
/// each check; every request that arrived before it started shares it. So a plan asked after a
/// `POST` to any process on the database returned includes those events, as a plan read from
/// the store would, while the store sees one small statement per check instead of one per plan.
///
/// A table kept answers by ``KeptPlanTable``'s rule, checked against what the checks found: the
/// prior epoch, the last event's number, and, for every device with new files, the largest first
/// event of those files (from the first check on; a table is kept only when it was read after the
/// first check), so a file of events from the table's `since` on ends it. Otherwise the plan is
/// read from the store as before, and the table read is kept.
package final class PlansInMemory: Sendable {
    /// What it holds, and the tasks waiting for the check they share.
    private let state: Mutex<State>
    /// Plans answered from a table here (counted outside the lock: a plan takes it as few times
    /// as it can, since the lock is every plan's).
    private let answered = Atomic<Int>(0)

    /// Keeps up to about `capacityBytes` of tables.
    package init(capacityBytes: Int) {
        state = Mutex(State(tables: BoundedCache(capacityBytes: capacityBytes)))
    }

    fileprivate struct State {
        /// Checks started, and finished, since the start.
        var started: UInt64 = 0
        var finished: UInt64 = 0
        var running = false
        /// The first check's last event: changes are known from it on.
        var origin: Int64?
        /// The last check's.
        var last: Int64 = 0
        var epoch: PlanEpoch?
        /// For each device with files since `origin` (0: every device), their largest first event.
        var touched: [Int64: Int64] = [:]
        /// Tables by device name, byte for byte (two names that only look alike, canonically
        /// equivalent as Swift `String`s, are two devices).
        var tables: BoundedCache<[UInt8], KeptPlanTable>
        /// Tasks waiting for a check, resumed whenever one ends.
        var waiting: [CheckedContinuation<Void, Never>] = []
        /// The last check that failed, and why: the tasks that waited for it fail with it.
        var failed: (number: UInt64, error: any Error)?
    }

    /// The plan of `name` from `start` (a request plan tables keep) from a table in memory, after
    /// a check of the store that started after this call; else read from the store by `read`
    /// (``ModelRepository/precomputedPlanKeeping(_:)``), and the table kept; `nil` when neither
    /// has one. With the table that answered it, which ``keepNote(_:device:table:)`` takes.
    ///
    /// The task waits for the check without holding a thread (a continuation, resumed when the
    /// check it needs has ended), and runs `check` itself when no check is running. Only `check`
    /// and `read` block, on the threads they choose: a plan answered from memory takes no thread
    /// but the check's, which every plan that arrived before it started shares. A check that
    /// fails fails every task that waited for it.
    /// - Parameters:
    ///   - check: Reads what changed since a last event's number (``ModelRepository/changesSince(_:)``);
    ///     one at a time, on a connection of its own.
    ///   - read: Reads the device's table from the store.
    package func keptPlan(
        device name: String, from start: Double, count: Int,
        check: (Int64) async throws -> ModelRepository.PlanChanges?,
        read: () async throws -> (plan: [Prediction], table: KeptPlanTable)?
    ) async throws -> (plan: [Prediction], table: KeptPlanTable)? {
        try await keptPlans(devices: [name], from: start, count: count, check: check, read: { _ in [try await read()] })[0]
    }

    /// ``keptPlan(device:from:count:check:read:)`` for several devices (a sweep's batch), after
    /// one check begun after this call: each from a table in memory, or read from the store, with
    /// the others, by one call of `read` (given the names it must answer, in order; it answers
    /// `nil` for a device without a plan kept ahead), and kept. In the order of `names`. When
    /// none of them has a table here, no check is waited for: a read from the store is as fresh
    /// as a check (once the first check has run, which the keeping needs).
    package func keptPlans(
        devices names: [String], from start: Double, count: Int,
        check: (Int64) async throws -> ModelRepository.PlanChanges?,
        read: ([String]) async throws -> [(plan: [Prediction], table: KeptPlanTable)?]
    ) async throws -> [(plan: [Prediction], table: KeptPlanTable)?] {
        let keys = names.map { Array($0.utf8) }
        // `nil`: the store does not answer checks (nothing is then kept).
        let found: [KeptPlanTable?]?
        switch try await awaitCheck(
            check, if: { state in state.origin == nil || keys.contains { state.tables.contains($0) } },
            then: { state in keys.map { key in state.tables.value(for: key).flatMap { Self.answers($0, in: state) ? $0 : nil } } })
        {
        case .answered(let tables): found = tables
        case .unchecked: found = nil
        case .skipped: found = Array(repeating: nil, count: names.count)
        }
        var plans: [(plan: [Prediction], table: KeptPlanTable)?] = Array(repeating: nil, count: names.count)
        var unanswered: [Int] = []
        for (i, name) in names.enumerated() {
            if let table = found?[i], let plan = table.predictions(device: name, from: start, count: count) {
                plans[i] = (plan, table)
            } else {
                unanswered.append(i)
            }
        }
        let answered = names.count - unanswered.count
        var fromStore: [(key: [UInt8], table: KeptPlanTable)] = []
        if !unanswered.isEmpty {
            let read = try await read(unanswered.map { names[$0] })
            precondition(read.count == unanswered.count, "a read answers each device it was given")
            for (i, kept) in zip(unanswered, read) {
                plans[i] = kept
                if let kept { fromStore.append((keys[i], kept.table)) }
            }
        }
        record(answered: answered, fromStore: fromStore, checked: found != nil)
        return plans
    }

    /// Keeps with `name`'s table what its empty-plan note reads of the device's latest model
    /// (``KeptPlanTable/note``; a table of format 4 was saved without), when the table kept is
    /// still `table` (the one that answered the plan the note was read for). The model was read
    /// after that plan's check, so it is of the table's events or of later ones; the facts are
    /// used only after a later check found no event of the device or every device since the
    /// table, so only while they are of the table's.
    package func keepNote(_ note: EmptyPlanNote.Facts, device name: String, table: KeptPlanTable) {
        let key = Array(name.utf8)
        let dropped = state.withLock { state -> [KeptPlanTable] in
            guard var kept = state.tables.value(for: key), kept.isSame(as: table), kept.note == nil else { return [] }
            kept.note = note
            return state.tables.keep(kept, for: key, cost: Self.cost(kept, key: key))
        }
        _ = dropped  // released here, after the lock
    }

    /// Counts plans answered from memory and keeps the tables read from the store when a check
    /// answered (``State/keep(_:)``).
    private func record(answered: Int, fromStore: [(key: [UInt8], table: KeptPlanTable)], checked: Bool) {
        if answered > 0 { self.answered.add(answered, ordering: .relaxed) }
        guard checked, !fromStore.isEmpty else { return }
        let dropped = state.withLock { $0.keep(fromStore) }
        _ = dropped  // released here, after the lock
    }

    /// When it holds no table after a check (at start, or after a new prior epoch emptied it),
    /// loads tables a page at a time (``ModelRepository/planTablePage(after:limit:)``) until
    /// every page is read, the memory is full or `shouldStop` says stop: a device's first plan
    /// since then is answered from memory too. A device whose table is held meanwhile (a plan
    /// read it) keeps it; a table that would push another out is not kept, and loading stops.
    /// - Parameters:
    ///   - check: As ``keptPlan(device:from:count:check:read:)``'s; the load waits for a check
    ///     begun after this call, as a plan does.
    ///   - page: Reads a page of tables from the store.
    /// - Returns: The tables it kept; 0 when it held some, or the store does not answer checks.
    package func preload(
        check: (Int64) async throws -> ModelRepository.PlanChanges?,
        page: (_ after: String?) async throws -> ModelRepository.PlanTablePage,
        shouldStop: () -> Bool = { false }
    ) async throws -> Int {
        // A table is kept only when read after the first check, of the epoch the last one found.
        guard case .answered(true) = try await awaitCheck(check, then: { $0.tables.count == 0 }) else { return 0 }
        var kept = 0
        var after: String?
        repeat {
            if shouldStop() { break }
            let read = try await page(after)
            after = read.next
            let (added, full) = state.withLock { state -> (Int, Bool) in
                var added = 0
                for (name, table) in read.tables {
                    let key = Array(name.utf8)
                    if state.tables.contains(key) { continue }
                    guard state.tables.bytes + Self.cost(table, key: key) <= state.tables.capacityBytes else { return (added, true) }
                    _ = state.keep([(key, table)])  // drops nothing: there is room
                    if state.tables.contains(key) { added += 1 }
                }
                return (added, false)
            }
            kept += added
            if full { break }
        } while after != nil
        return kept
    }

    /// About how many bytes a table kept for `key` takes.
    fileprivate static func cost(_ table: KeptPlanTable, key: [UInt8]) -> Int { table.table.count + key.count + (table.note == nil ? 128 : 192) }

    /// What it did so far.
    package struct Counts: Sendable, Equatable {
        /// Tables kept, and about how many bytes they take.
        package var tables = 0, bytes = 0
        /// Plans answered from a table in memory.
        package var answered = 0
        /// Checks of the store.
        package var checks = 0

        package init(tables: Int = 0, bytes: Int = 0, answered: Int = 0, checks: Int = 0) {
            (self.tables, self.bytes, self.answered, self.checks) = (tables, bytes, answered, checks)
        }
    }

    /// What it holds and did so far.
    package var counts: Counts {
        let answered = self.answered.load(ordering: .relaxed)
        return state.withLock { Counts(tables: $0.tables.count, bytes: $0.tables.bytes, answered: answered, checks: Int($0.finished)) }
    }

    /// Tasks waiting for a check now.
    package var waitingTasks: Int { state.withLock { $0.waiting.count } }

    /// Whether `table` answers as of the last check.
    private static func answers(_ table: KeptPlanTable, in state: State) -> Bool {
        guard let origin = state.origin, table.read >= origin, table.epoch == state.epoch, table.watermark <= state.last
        else { return false }
        return max(state.touched[table.device] ?? .min, state.touched[0] ?? .min) < table.since
    }

    /// Waits until a check that started after this call has finished (running it when none is
    /// running), then returns `body`'s answer on the state it left: `.unchecked` when the store
    /// does not answer checks, `.skipped` (nothing waited for) when `wanted` says no at the call.
    /// The task waits as a continuation, holding no thread. A plan that waits takes the lock three
    /// times (arriving, waiting, answering); the one that runs the check twice (arriving, then
    /// ending the check and answering), or four times when it waited first.
    /// - Throws: What the check it needed threw (whoever ran it), or what `check` throws.
    private func awaitCheck<T>(
        _ check: (Int64) async throws -> ModelRepository.PlanChanges?, if wanted: (State) -> Bool = { _ in true },
        then body: (inout State) -> T
    ) async throws -> CheckAnswer<T> {
        var needed: UInt64?
        while true {
            let step: CheckStep<T> = state.withLock { state in
                if needed == nil {
                    guard wanted(state) else { return .skipped }
                    needed = state.started + 1
                }
                if state.finished >= needed! { return .ended(body(&state)) }
                if let failed = state.failed, failed.number >= needed! { return .failed(failed.error) }
                if state.running { return .wait }
                state.running = true
                state.started += 1
                return .run(number: state.started, after: state.last)
            }
            switch step {
            case .skipped:
                return .skipped
            case .ended(let answer):
                return .answered(answer)
            case .failed(let error):
                throw error
            case .wait:
                await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                    // A check that ended meanwhile: look again at once.
                    let now = state.withLock { state in
                        guard state.running else { return true }
                        state.waiting.append(waiter)
                        return false
                    }
                    if now { waiter.resume() }
                }
            case .run(let number, let after):
                // The store is read without the lock; whoever arrives meanwhile waits for the next.
                let changes: ModelRepository.PlanChanges?
                do {
                    changes = try await check(after)
                } catch {
                    state.withLock { $0.ended(number, failing: error) }
                    throw error
                }
                // The task that ran the check answers at once, under the same lock.
                let answer = state.withLock { state -> T? in
                    state.ended(number, with: changes)
                    return changes == nil ? nil : body(&state)
                }
                return answer.map { .answered($0) } ?? .unchecked
            }
        }
    }

    /// What a task waiting for a check does next.
    private enum CheckStep<T> {
        case ended(T), wait, skipped
        case failed(any Error)
        case run(number: UInt64, after: Int64)
    }

    /// What ``awaitCheck(_:if:then:)`` found.
    private enum CheckAnswer<T> {
        case answered(T), unchecked, skipped
    }
}

extension PlansInMemory.State {
    /// Keeps tables read from the store: only those read after the first check (the checks from
    /// the one before their read on see every file after it), of the epoch the last check found.
    /// Returns what it dropped, to release after the lock.
    fileprivate mutating func keep(_ read: [(key: [UInt8], table: KeptPlanTable)]) -> [KeptPlanTable] {
        var dropped: [KeptPlanTable] = []
        for (key, table) in read where origin.map({ table.read >= $0 }) == true && table.epoch == epoch {
            dropped += tables.keep(table, for: key, cost: PlansInMemory.cost(table, key: key))
        }
        return dropped
    }

    /// Records the end of check `number` and wakes whoever waits for it. (A continuation resumed
    /// under the lock only schedules its task, which then takes the lock.)
    fileprivate mutating func ended(_ number: UInt64, with changes: ModelRepository.PlanChanges?) {
        running = false
        finished = number
        if let changes { apply(changes) }
        wakeWaiters()
    }

    /// ``ended(_:with:)`` for a check that threw `error`: the tasks that needed it fail with it.
    fileprivate mutating func ended(_ number: UInt64, failing error: any Error) {
        running = false
        failed = (number, error)
        wakeWaiters()
    }

    private mutating func wakeWaiters() {
        for waiter in waiting { waiter.resume() }
        waiting = []
    }

    /// Records a check's answer.
    private mutating func apply(_ changes: ModelRepository.PlanChanges) {
        if origin == nil { origin = changes.last }
        if changes.epoch != epoch {
            epoch = changes.epoch
            tables.removeAll()
        }
        if changes.last < last {
            // Events forgotten: nothing known still holds.
            tables.removeAll()
            touched = [:]
            origin = changes.last
        }
        last = changes.last
        for (device, first) in changes.touched { touched[device] = max(touched[device] ?? .min, first) }
    }
}
