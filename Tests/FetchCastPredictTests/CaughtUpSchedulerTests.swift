import FetchCastCore
@testable import FetchCastStore  // the connection, to drop saved schedulers
import FetchCastTrace
import Foundation
import Testing
import FetchCastTestSupport
@testable import FetchCastPredict

/// A plan that goes on from a kept scheduler (``SchedulerCache``, or one saved in the store)
/// answers exactly what a repository that never planned before answers on a store with the same
/// events; a kept scheduler is dropped when an event of its device arrives dated before where it
/// stopped, or when its prior changes (a new prior epoch).
struct CaughtUpSchedulerTests {
    /// Two weeks of two devices: mail at 08:0x and 20:0x, chat ten minutes after mail, news at 12:3x.
    private static func habits(days: Range<Int>, devices: [String]) -> [String] {
        var rows: [String] = []
        for day in days {
            let date = Timestamp.format(micros: Int64(1_699_833_600 + day * 86_400) * 1_000_000, utcOffsetSeconds: 3600).prefix(10)
            for d in devices {
                rows += ["\(date)T08:0\(day % 7):00+01:00,\(d),mail,launch,,,", "\(date)T08:1\(day % 7):00+01:00,\(d),chat,launch,,,",
                         "\(date)T12:3\(day % 7):00+01:00,\(d),news,launch,,,", "\(date)T20:0\(day % 7):00+01:00,\(d),mail,launch,,,"]
            }
        }
        return rows.sorted()
    }

    /// Two weeks of habits, the last day's only up to 08:06 (its mail launch).
    private static func history(devices: [String]) -> [String] {
        habits(days: 0..<14, devices: devices).filter { $0 < "2023-11-26T08:07" }
    }

    /// A store fed the same files as another, planned only by fresh repositories.
    private final class Twin {
        let temporary: TemporaryStore
        let store: Store
        let repository: ModelRepository

        init() throws {
            temporary = try TemporaryStore()
            store = try temporary.open()
            repository = ModelRepository(store: store)
        }

        func ingest(_ rows: [String]) throws { try temporary.ingest(rows, into: store) }

        func plan(_ device: String, at text: String, repository: ModelRepository? = nil) async throws -> [Prediction] {
            let repository = repository ?? ModelRepository(store: store)
            let request = PredictionRequest(device: device, at: Timestamp.parseArgument(text)!, count: 20, budget: 6)
            return try await Predictor.predict(request, snapshot: try repository.refresh(devices: [device]))
        }
    }

    @Test func goingOnFromAKeptSchedulerAnswersWhatCatchingUpFromNothingDoes() async throws {
        let kept = try Twin(), fresh = try Twin()
        func both(_ rows: [String]) throws { try kept.ingest(rows); try fresh.ingest(rows) }
        try both(Self.history(devices: ["a", "b"]))
        let first = try await kept.plan("a", at: "2023-11-26T08:06:01+01:00", repository: kept.repository)
        #expect(first == (try await fresh.plan("a", at: "2023-11-26T08:06:01+01:00")))
        #expect(kept.repository.schedulersReused == 0)
        #expect(!first.isEmpty)

        // Later events of `a` alone: `a`'s prior (the other devices) is unchanged, so the kept
        // scheduler goes on with just the new events.
        try both(["2023-11-26T12:36:00+01:00,a,news,launch,,,", "2023-11-26T20:06:00+01:00,a,mail,launch,,,"])
        let later = try await kept.plan("a", at: "2023-11-26T20:06:01+01:00", repository: kept.repository)
        #expect(kept.repository.schedulersReused == 1)
        #expect(later == (try await fresh.plan("a", at: "2023-11-26T20:06:01+01:00")))
        #expect(!later.isEmpty)

        // An event of `a` dated before where the kept scheduler stopped: it no longer says what
        // the history says, so the plan catches up from nothing.
        try both(["2023-11-26T09:30:00+01:00,a,news,launch,,,"])
        let backDated = try await kept.plan("a", at: "2023-11-26T20:06:02+01:00", repository: kept.repository)
        #expect(kept.repository.schedulersReused == 1)
        #expect(backDated == (try await fresh.plan("a", at: "2023-11-26T20:06:02+01:00")))

        // Asked again later with nothing added: goes on.
        let again = try await kept.plan("a", at: "2023-11-26T20:07:00+01:00", repository: kept.repository)
        #expect(kept.repository.schedulersReused == 2)
        #expect(again == (try await fresh.plan("a", at: "2023-11-26T20:07:00+01:00")))

        // Events of `b`, even of an app new to it, leave `a`'s prior as the epoch made it: reused.
        try both(["2023-11-26T20:07:30+01:00,b,news,launch,,,", "2023-11-26T20:07:40+01:00,b,weather,launch,,,"])
        let afterOther = try await kept.plan("a", at: "2023-11-26T20:08:00+01:00", repository: kept.repository)
        #expect(kept.repository.schedulersReused == 3)
        #expect(afterOther == (try await fresh.plan("a", at: "2023-11-26T20:08:00+01:00")))

        // A week of `b` (more than a quarter of the store's events): a new prior epoch moves
        // `a`'s prior, so the plan catches up from nothing.
        try both(Self.habits(days: 14..<21, devices: ["b"]))
        let newEpoch = try await kept.plan("a", at: "2023-11-26T20:09:00+01:00", repository: kept.repository)
        #expect(kept.repository.schedulersReused == 3)
        #expect(newEpoch == (try await fresh.plan("a", at: "2023-11-26T20:09:00+01:00")))
    }

    @Test func aSchedulerSavedByAnEarlierProcessIsUsedOnlyWhileItStillHolds() async throws {
        let kept = try Twin(), fresh = try Twin()
        func both(_ rows: [String]) throws { try kept.ingest(rows); try fresh.ingest(rows) }
        try both(Self.history(devices: ["a", "b"]))
        _ = try await kept.plan("a", at: "2023-11-26T08:06:01+01:00")  // saves the scheduler
        try both(["2023-11-26T12:36:00+01:00,a,news,launch,,,"])
        // A new repository (a new `predict` process) goes on from the saved one.
        let next = ModelRepository(store: kept.store)
        let later = try await kept.plan("a", at: "2023-11-26T12:36:01+01:00", repository: next)
        #expect(next.schedulersReused == 1)
        #expect(later == (try await fresh.plan("a", at: "2023-11-26T12:36:01+01:00")))
        // Planned from before where it stopped: from nothing.
        let earlier = ModelRepository(store: kept.store)
        let before = try await kept.plan("a", at: "2023-11-26T08:00:00+01:00", repository: earlier)
        #expect(earlier.schedulersReused == 0)
        #expect(before == (try await fresh.plan("a", at: "2023-11-26T08:00:00+01:00")))
    }

    @Test func theCacheStaysWithinItsCapacityDroppingTheLeastRecentlyUsed() async throws {
        let twin = try Twin()
        try twin.ingest(Self.history(devices: ["a", "b", "c"]))
        // The devices' schedulers cost about the same: room for two and a half of them.
        let probe = ModelRepository(store: twin.store)
        _ = try await twin.plan("a", at: "2023-11-26T08:06:01+01:00", repository: probe)
        let cost = probe.schedulerCache.bytes
        #expect(cost > 0)
        let repository = ModelRepository(store: twin.store)
        repository.schedulerCache = SchedulerCache(capacityBytes: cost * 5 / 2)
        func plan(_ device: String, _ time: String) async throws -> Int {
            let before = repository.schedulersReused
            _ = try await twin.plan(device, at: "2023-11-26T\(time)+01:00", repository: repository)
            return repository.schedulersReused - before
        }
        // Saved rows would be reused too; this repository is about its memory.
        try twin.store.connection.execute("DELETE FROM model_state WHERE key LIKE 'scheduler:%'")
        #expect(try await plan("a", "08:06:01") == 0)
        #expect(try await plan("b", "08:06:01") == 0)
        #expect(try await plan("a", "08:07:01") == 1, "a is now the most recently used")
        #expect(try await plan("c", "08:06:01") == 0, "c drops b, the least recently used")
        #expect(repository.schedulerCache.count == 2)
        #expect(repository.schedulerCache.bytes <= cost * 5 / 2)
        try twin.store.connection.execute("DELETE FROM model_state WHERE key LIKE 'scheduler:%'")
        #expect(try await plan("a", "08:08:01") == 1)
        #expect(try await plan("b", "08:08:01") == 0, "b was dropped")
    }
}

/// A `forget` of a file in the middle of a device's history leaves the store's last event
/// number, and the device's prior (what the other devices say), as they were: a scheduler kept
/// in memory before it must still never answer for the forgotten events.
struct ForgottenEventsTests {
    @Test func aKeptSchedulerToldOfForgottenEventsIsNotUsedAgain() async throws {
        let temporary = try TemporaryStore(), fresh = try TemporaryStore()
        let store = try temporary.open(), reference = try fresh.open()
        // Two weeks of `a` and `b` launching mail, chat and news; a middle file of more mail
        // launches of `a` at 16:0x (the apps `a` uses, in the same order); a later file of `b`.
        let history = (0..<14).flatMap { day -> [String] in
            let date = Timestamp.format(micros: Int64(1_699_833_600 + day * 86_400) * 1_000_000, utcOffsetSeconds: 3600).prefix(10)
            return ["a", "b"].flatMap { d in
                ["\(date)T08:0\(day % 7):00+01:00,\(d),mail,launch,,,", "\(date)T08:1\(day % 7):00+01:00,\(d),chat,launch,,,",
                 "\(date)T12:3\(day % 7):00+01:00,\(d),news,launch,,,", "\(date)T20:0\(day % 7):00+01:00,\(d),mail,launch,,,"]
            }
        }.sorted()
        let middle = (3..<13).map { day in
            "\(Timestamp.format(micros: Int64(1_699_833_600 + day * 86_400) * 1_000_000, utcOffsetSeconds: 3600).prefix(10))T16:0\(day % 7):00+01:00,a,mail,launch,,,"
        }
        let later = ["2023-11-27T08:00:00+01:00,b,mail,launch,,,"]
        _ = try temporary.ingest(history, into: store)
        let forgotten = try temporary.ingest(middle, into: store)
        _ = try temporary.ingest(later, into: store)
        _ = try fresh.ingest(history, into: reference)
        _ = try fresh.ingest(later, into: reference)

        let repository = ModelRepository(store: store)  // a server's: its schedulers kept in memory
        let request = PredictionRequest(device: "a", at: Timestamp.parseArgument("2023-11-27T09:00:00+01:00")!, count: 20, budget: 6)
        let before = try await Predictor.predict(request, snapshot: try repository.refresh(devices: ["a"]))
        let last = try store.lastEventID()
        _ = try store.forget(forgotten)
        #expect(try store.lastEventID() == last, "a middle file: the last event's number is unchanged")

        let expected = try await Predictor.predict(request, snapshot: try ModelRepository(store: reference).refresh(devices: ["a"]))
        #expect(expected != before, "the forgotten launches change a's plan")
        let reused = repository.schedulersReused
        let after = try await Predictor.predict(request, snapshot: try repository.refresh(devices: ["a"]))
        #expect(after == expected)
        #expect(repository.schedulersReused == reused, "caught up again, not gone on from the kept scheduler")
        // A new process planning from the store answers the same (no saved scheduler of before).
        #expect(try await Predictor.predict(request, snapshot: try ModelRepository(store: store).refresh(devices: ["a"])) == expected)
    }

    /// A forgotten file that changed no sum (one `state` row: the model never sees those) still
    /// gives the fold after the forget a new prior epoch: the forget's mark is mixed into its tag.
    @Test func aForgetAlwaysStartsAnEpochOfItsOwn() async throws {
        let temporary = try TemporaryStore()
        let store = try temporary.open()
        _ = try temporary.ingest(["2023-11-20T08:00:00+01:00,a,mail,launch,,,", "2023-11-20T09:00:00+01:00,b,mail,launch,,,"], into: store)
        let state = try temporary.write("state.csv", "time,device,app,event,result,bytes,duration_ms,network,power,battery,low_power\n"
            + "2023-11-20T08:30:00+01:00,a,,state,,,,wifi,charging,80,off\n")
        _ = try Ingestor(store: store, options: .init(now: { 1_700_000_000 })).ingest(path: state)
        _ = try temporary.ingest(["2023-11-21T08:00:00+01:00,b,mail,launch,,,"], into: store)
        let repository = ModelRepository(store: store)
        func epoch() async throws -> ModelRepository.PriorEpoch? {
            _ = try await repository.refresh()
            return try await store.readTransaction { try await repository.priorEpoch(fold: try await repository.savedFold()) }
        }
        let before = try #require(try await epoch())
        let sums = try #require(try await store.modelState(key: ModelRepository.populationKey)?.state)
        _ = try store.forget(state)
        let after = try #require(try await epoch())
        #expect(try await store.modelState(key: ModelRepository.populationKey)?.state == sums, "the same sums")
        #expect(after.watermark == before.watermark)
        #expect(after.tag != before.tag)
    }
}
