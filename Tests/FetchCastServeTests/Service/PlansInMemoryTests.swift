import Dispatch
import FetchCastModel
import FetchCastTestSupport
import Synchronization
import Testing
@testable import FetchCastPredict
@testable import FetchCastServe

/// Plans kept ahead held in a server's memory: answered after a check of the store that began
/// after the request, and only while the store says nothing made them stale.
struct PlansInMemoryTests {
    private static let epoch = PlanEpoch(watermark: 50, tag: 7)

    /// A table for device 1 planned when the store held 90 events, read at 100: from any start
    /// in (1000, 2000] it plans news at 1500.
    private static func kept(read: Int64 = 100, since: Int64 = 90, epoch: PlanEpoch = epoch) -> KeptPlanTable {
        let fetch = Prediction(device: "d", app: "news", fetchAt: "t", fetchAtUnix: 1500, launchProbability: 0.5, newDataProbability: 0.5, reason: "r")
        let table = PlanTable(after: 1000, segments: [PlanTable.Segment(through: 2000, predictions: [fetch])])
        return KeptPlanTable(device: 1, table: table.binaryEncoded(), since: since, watermark: since, epoch: epoch, read: read)
    }

    /// What the store answers, and how often it was asked.
    private final class FakeStore: @unchecked Sendable {  // under `lock`
        let lock = Mutex(())
        var changes: [ModelRepository.PlanChanges] = []
        var asked: [Int64] = []
        var reads = 0
        var table: KeptPlanTable? = PlansInMemoryTests.kept()

        func check(_ after: Int64) -> ModelRepository.PlanChanges? {
            lock.withLock { _ in
                asked.append(after)
                return changes.count > 1 ? changes.removeFirst() : changes[0]
            }
        }

        func read() -> (plan: [Prediction], table: KeptPlanTable)? {
            lock.withLock { _ in
                reads += 1
                return table.map { ($0.predictions(device: "d", from: 1200, count: .max)!, $0) }
            }
        }
    }

    /// Holds the first check a test's plans run until the test releases it.
    private final class CheckGate: Sendable {
        /// Signalled when the held check has started; the test then signals `release`.
        let inCheck = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        private let held = Atomic<Bool>(false)

        /// A check, on a thread of its own, that the first time waits until released and then
        /// answers as `store` does; every later check answers `thenAnswer`.
        func blockingOnce(
            _ store: FakeStore, thenAnswer: @escaping @Sendable (Int64) -> ModelRepository.PlanChanges?
        ) -> @Sendable (Int64) async throws -> ModelRepository.PlanChanges? {
            { after in
                try await offThread {
                    guard !self.held.exchange(true, ordering: .relaxed) else { return thenAnswer(after) }
                    self.inCheck.signal()
                    self.release.wait()
                    return store.check(after)
                }
            }
        }
    }

    private func plan(_ memory: PlansInMemory, _ store: FakeStore, device: String = "d") async throws -> [Prediction]? {
        try await memory.keptPlan(device: device, from: 1200, count: .max, check: store.check, read: store.read)?.plan
    }

    @Test func answersFromMemoryUntilTheDeviceOrEveryDeviceHasNewFiles() async throws {
        let memory = PlansInMemory(capacityBytes: 1 << 20)
        let store = FakeStore()
        store.changes = [.init(last: 100, touched: [:], epoch: Self.epoch)]
        let first = try await plan(memory, store)
        #expect(first?.map(\.fetchAtUnix) == [1500])
        #expect(store.reads == 1 && memory.counts.tables == 1 && memory.counts.answered == 0)
        #expect(try await plan(memory, store) == first)
        #expect(store.reads == 1 && memory.counts.answered == 1, "the second plan came from memory")
        #expect(store.asked == [0, 100], "each check asks from the last one's last event")

        // Another device's new file changes nothing; this device's does.
        store.changes = [.init(last: 120, touched: [2: 100], epoch: Self.epoch)]
        #expect(try await plan(memory, store) == first)
        #expect(store.reads == 1)
        store.changes = [.init(last: 130, touched: [1: 120], epoch: Self.epoch)]
        store.table = nil  // the store's table is stale too: no plan kept ahead
        #expect(try await plan(memory, store) == nil)
        #expect(store.reads == 2)

        // A fresh table read after that file answers again; a file for every device ends it.
        store.table = Self.kept(read: 130, since: 130)
        #expect(try await plan(memory, store) == first && store.reads == 3)
        #expect(try await plan(memory, store) == first && store.reads == 3)
        store.changes = [.init(last: 140, touched: [0: 130], epoch: Self.epoch)]
        _ = try await plan(memory, store)
        #expect(store.reads == 4)

        // A device without a table in memory is read from the store without waiting for a check.
        let checks = memory.counts.checks
        _ = try await plan(memory, store, device: "other")
        #expect(store.reads == 5 && memory.counts.checks == checks)
    }

    /// Names that only look alike (canonically equivalent, equal as Swift strings) are two
    /// devices: one's table never answers for the other.
    @Test func namesThatOnlyLookAlikeKeepTablesOfTheirOwn() async throws {
        let memory = PlansInMemory(capacityBytes: 1 << 20)
        let store = FakeStore()
        store.changes = [.init(last: 100, touched: [:], epoch: Self.epoch)]
        _ = try await plan(memory, store, device: "\u{E9}")
        _ = try await plan(memory, store, device: "e\u{301}")
        #expect(store.reads == 2 && memory.counts.tables == 2)
        let swept = try await memory.keptPlans(
            devices: ["\u{E9}", "e\u{301}", "other"], from: 1200, count: .max, check: store.check, read: { $0.map { _ in store.read() } })
        #expect(swept.map { $0 != nil } == [true, true, true])
        #expect(store.reads == 3 && memory.counts.answered == 2, "the two from memory, the third read")
    }

    @Test func aNewPriorEpochOrFewerEventsDropsWhatWasKept() async throws {
        let memory = PlansInMemory(capacityBytes: 1 << 20)
        let store = FakeStore()
        store.changes = [.init(last: 100, touched: [:], epoch: Self.epoch)]
        _ = try await plan(memory, store)
        _ = try await plan(memory, store)
        #expect(store.reads == 1)
        let next = PlanEpoch(watermark: 100, tag: 8)
        store.changes = [.init(last: 100, touched: [:], epoch: next)]
        store.table = Self.kept(read: 100, since: 90, epoch: next)
        _ = try await plan(memory, store)
        #expect(store.reads == 2, "the table of the previous epoch is not used")
        _ = try await plan(memory, store)
        #expect(store.reads == 2)
        store.changes = [.init(last: 80, touched: [:], epoch: next)]
        _ = try await plan(memory, store)
        #expect(store.reads == 3, "fewer events than the table was planned with: read again")
    }

    /// Loaded at once, a page at a time after a check, each table is then answered from memory
    /// as one read on its device's first plan would be; loading stops when the memory is full,
    /// and only starts while it holds no table.
    @Test func preloadedTablesAnswerWithoutAReadUntilTheirDeviceHasNewFiles() async throws {
        let table = Self.kept()
        let cost = table.table.count + 1 + 128
        let memory = PlansInMemory(capacityBytes: 3 * cost)
        let store = FakeStore()
        store.changes = [.init(last: 100, touched: [:], epoch: Self.epoch)]
        var pages: [String?] = []
        let names = ["a", "b", "c", "d", "e"]
        let loaded = try await memory.preload(check: store.check, page: { after in
            pages.append(after)
            let start = after.map { names.firstIndex(of: $0)! + 1 } ?? 0
            let batch = names[start..<min(names.count, start + 2)]
            var page = ModelRepository.PlanTablePage(next: batch.last == names.last ? nil : batch.last)
            page.tables = batch.map { ($0, table) }
            if batch.first == "c" { page.tables.append(("old", Self.kept(read: 99))) }  // read before the check: not kept
            return page
        })
        #expect(loaded == 3 && memory.counts.tables == 3, "three fit")
        #expect(pages == [nil, "b"], "no page read once the memory was full")
        #expect(store.asked == [0])
        for name in ["a", "b", "c"] {
            #expect(try await plan(memory, store, device: name)?.map(\.fetchAtUnix) == [1500])
        }
        #expect(store.reads == 0 && memory.counts.answered == 3, "answered from memory, not read")
        _ = try await plan(memory, store, device: "d")
        #expect(store.reads == 1, "a device not loaded is read")

        // It holds tables: no second load.
        #expect(try await memory.preload(check: store.check, page: { _ in Issue.record("read a page"); return .init() }) == 0)
        // Its device's new file makes a loaded table stale, as one read on demand.
        store.changes = [.init(last: 120, touched: [1: 100], epoch: Self.epoch)]
        store.table = nil
        #expect(try await plan(memory, store, device: "a") == nil)
    }

    /// An empty plan's note, read once for a table saved without one (format 4), is kept with that table: the next plan it
    /// answers carries it; a note read for a table since replaced is not kept with the new one,
    /// and a table read after its device's new file carries none.
    @Test func aNoteIsKeptWithTheTableItWasReadFor() async throws {
        let memory = PlansInMemory(capacityBytes: 1 << 20)
        let store = FakeStore()
        store.changes = [.init(last: 100, touched: [:], epoch: Self.epoch)]
        func kept() async throws -> (plan: [Prediction], table: KeptPlanTable)? {
            try await memory.keptPlan(device: "d", from: 1200, count: .max, check: store.check, read: store.read)
        }
        let first = try #require(try await kept())
        #expect(first.table.note == nil)
        let facts = EmptyPlanNote.Facts(
            lastEventTime: 990, tau: 1800, pickupClock: PickupClockFacts(observedDays: 9, pickups: 8, lastLaunch: 980, longestSilence: 50_400),
            lastObservedTime: 995)
        memory.keepNote(facts, device: "d", table: first.table)
        let second = try #require(try await kept())
        #expect(store.reads == 1 && second.table.note == facts)
        #expect(second.table.isSame(as: first.table))

        // The device's new file: the table read after it carries no note, and a note read
        // for the old table is not kept with the new one.
        store.changes = [.init(last: 130, touched: [1: 120], epoch: Self.epoch)]
        store.table = Self.kept(read: 130, since: 130)
        let third = try #require(try await kept())
        #expect(store.reads == 2 && third.table.note == nil && !third.table.isSame(as: first.table))
        memory.keepNote(facts, device: "d", table: first.table)
        #expect(try await kept()?.table.note == nil)
        memory.keepNote(facts, device: "d", table: third.table)
        #expect(try await kept()?.table.note == facts && store.reads == 2)
    }

    @Test func aTableReadBeforeTheFirstCheckIsNotKept() async throws {
        let memory = PlansInMemory(capacityBytes: 1 << 20)
        let store = FakeStore()
        store.changes = [.init(last: 100, touched: [:], epoch: Self.epoch)]
        store.table = Self.kept(read: 99)  // read from an older snapshot than the checks know
        _ = try await plan(memory, store)
        _ = try await plan(memory, store)
        #expect(store.reads == 2 && memory.counts.tables == 0)
    }

    /// A plan asked while a check is under way waits for the next one: the check under way may
    /// have read the store before the events the asker knows of (a `POST` that returned).
    @Test(.timeLimit(.minutes(1))) func aPlanWaitsForACheckThatBeganAfterItWasAsked() async throws {
        let memory = PlansInMemory(capacityBytes: 1 << 20)
        let store = FakeStore()
        store.changes = [.init(last: 100, touched: [:], epoch: Self.epoch)]
        _ = try await plan(memory, store)
        #expect(store.reads == 1)
        // The next check blocks until released; the one after it sees a new file of device 1.
        let gate = CheckGate()
        let check = gate.blockingOnce(store, thenAnswer: { _ in .init(last: 110, touched: [1: 100], epoch: Self.epoch) })
        let read: @Sendable () async throws -> (plan: [Prediction], table: KeptPlanTable)? = { store.read() }
        async let first = memory.keptPlan(device: "d", from: 1200, count: .max, check: check, read: read)
        try await offThread { gate.inCheck.wait() }
        async let second = memory.keptPlan(device: "d", from: 1200, count: .max, check: check, read: read)
        // The second asks while the first's check is under way.
        while memory.waitingTasks < 1 { try await Task.sleep(for: .milliseconds(5)) }
        gate.release.signal()
        _ = try await (first, second)
        #expect(memory.counts.checks == 3, "the second plan waited for a check of its own")
        #expect(store.reads == 2, "and that check made it read the store again")
    }

    /// Tasks asking while a check is under way wait for the next one holding no thread (far more
    /// of them than the machine has threads for tasks), share it, and each gets its plan.
    @Test(.timeLimit(.minutes(1))) func tasksWaitForTheNextCheckWithoutAThread() async throws {
        let memory = PlansInMemory(capacityBytes: 1 << 20)
        let store = FakeStore()
        store.changes = [.init(last: 100, touched: [:], epoch: Self.epoch)]
        _ = try await plan(memory, store)
        let gate = CheckGate()
        let check = gate.blockingOnce(store, thenAnswer: store.check)
        let read: @Sendable () async throws -> (plan: [Prediction], table: KeptPlanTable)? = { try await offThread { store.read() } }
        async let first = memory.keptPlan(device: "d", from: 1200, count: .max, check: check, read: read)
        try await offThread { gate.inCheck.wait() }
        let plans = try await withThrowingTaskGroup(of: [Prediction]?.self) { group in
            for _ in 0..<200 {
                group.addTask { try await memory.keptPlan(device: "d", from: 1200, count: .max, check: check, read: read)?.plan }
            }
            // Every one of them asks while the check is under way, then it ends.
            while memory.waitingTasks < 200 { try await Task.sleep(for: .milliseconds(5)) }
            gate.release.signal()
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(try await first?.plan.map(\.fetchAtUnix) == [1500])
        #expect(plans.count == 200 && plans.allSatisfy { $0?.map(\.fetchAtUnix) == [1500] })
        #expect(memory.counts.checks == 3, "the 200 shared one check, begun after they asked")
        #expect(store.reads == 1 && memory.counts.answered == 201)
    }

    /// A check that fails fails the tasks that waited for it (each of those requests answers at
    /// once, as the one that ran it does); the next plan asked runs a check of its own.
    @Test(.timeLimit(.minutes(1))) func aFailedCheckFailsTheTasksThatWaitedForIt() async throws {
        struct Lost: Error {}
        let memory = PlansInMemory(capacityBytes: 1 << 20)
        let store = FakeStore()
        store.changes = [.init(last: 100, touched: [:], epoch: Self.epoch)]
        _ = try await plan(memory, store)
        // The second check blocks until released; the third fails.
        let inCheck = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let calls = Atomic<Int>(1)
        let check: @Sendable (Int64) async throws -> ModelRepository.PlanChanges? = { after in
            try await offThread {
                switch calls.add(1, ordering: .relaxed).newValue {
                case 2:
                    inCheck.signal()
                    release.wait()
                case 3: throw Lost()
                default: break
                }
                return store.check(after)
            }
        }
        let read: @Sendable () async throws -> (plan: [Prediction], table: KeptPlanTable)? = { try await offThread { store.read() } }
        // The times of the plan asked, or why it failed.
        @Sendable func ask() async -> Result<[Double]?, any Error> {
            do {
                return .success(try await memory.keptPlan(device: "d", from: 1200, count: .max, check: check, read: read)?.plan.map(\.fetchAtUnix))
            } catch {
                return .failure(error)
            }
        }
        async let first = ask()
        try await offThread { inCheck.wait() }
        // Both ask during the second check, so both need the third: one runs it, the other waits.
        async let a = ask()
        async let b = ask()
        while memory.waitingTasks < 2 { try await Task.sleep(for: .milliseconds(5)) }
        release.signal()
        let (ranSecond, ranOrWaited, waitedOrRan) = await (first, a, b)
        #expect(try ranSecond.get() == [1500])
        #expect(throws: Lost.self) { try ranOrWaited.get() }
        #expect(throws: Lost.self) { try waitedOrRan.get() }
        #expect(try await ask().get() == [1500], "the next plan runs a check of its own")
        #expect(calls.load(ordering: .relaxed) == 4 && memory.counts.checks == 4)
    }
}
