import FetchCastCore
import FetchCastModel
@testable import FetchCastPredict
@testable import FetchCastReplay
import FetchCastStore
import FetchCastTestSupport
import Foundation
import Synchronization
import Testing

/// The replay and the store's catch-up tell a policy of one instant's events in the same order,
/// ``InstantOrder``'s, whatever order the trace listed them in.
struct InstantOrderAgreementTests {
    /// A trace whose 08:00 instant holds every kind, listed in an order the rule changes.
    static let text = """
        time,device,app,event,result,bytes,duration_ms,network,power,battery,low_power
        2024-01-01T07:00:00Z,d1,a,launch,,,,,,,
        2024-01-01T08:00:00Z,d1,b,fetch,newData,,,,,,
        2024-01-01T08:00:00Z,d1,a,launch,,,,,,,
        2024-01-01T08:00:00Z,d1,,state,,,,wifi,charging,,
        2024-01-01T08:00:00Z,d1,c,publish,,,,,,,
        2024-01-01T08:00:00Z,,d,publish,,,,,,,
        2024-01-01T08:00:00Z,d1,e,launch,,,,,,,
        2024-01-01T08:00:00Z,d1,,state,,,,,battery,,
        2024-01-01T08:00:00Z,,f,publish,,,,,,,
        2024-01-01T09:00:00Z,d1,a,launch,,,,,,,
        """

    /// 2024-01-01T08:00:00Z.
    static let eight = 1_704_096_000.0

    /// What a policy is told at 08:00, in the rule's order.
    static let expected = [
        "publish d", "publish f", "publish c", "state wifi", "state battery", "look", "fetch b", "launch a", "launch e",
    ]

    /// What a replayed policy was told, in order.
    final class Log: Sendable {
        let lines = Mutex<[String]>([])
        func add(_ line: String) { lines.withLock { $0.append(line) } }
    }

    /// A policy that looks at 08:00 and writes down every call at that instant.
    struct ProbePolicy: FetchPolicy {
        let log: Log
        let names: [String]
        var nextWakeup: Double? = InstantOrderAgreementTests.eight

        mutating func wake(at time: Double, into fetches: inout [PlannedFetch]) {
            log.add("look")
            nextWakeup = nil
        }

        mutating func observe(_ event: DeviceEvent) {
            if event.time == InstantOrderAgreementTests.eight { log.add("\(event.kind.name) \(names[Int(event.app)])") }
        }

        mutating func observeConditions(_ conditions: DeviceConditions, at time: Double, utcOffsetSeconds: Int32) {
            if time == InstantOrderAgreementTests.eight { log.add("state " + Self.describe(conditions)) }
        }

        mutating func didFetch(app: Int32, at time: Double, result: FetchResult) {}

        /// The condition the row changed, as the trace writes it (what holds after both rows).
        static func describe(_ conditions: DeviceConditions) -> String {
            conditions.power == .battery ? "battery" : conditions.network?.name ?? "?"
        }
    }

    /// What the probe is told when the trace is replayed from `input`.
    private static func replayed(_ input: EvaluationInput) throws -> [String] {
        let log = Log()
        var registry = PolicyRegistry.standard
        registry.register("probe") { context in ProbePolicy(log: log, names: context.appNames) }
        let options = EvaluationOptions(policies: ["probe"], budgets: [24], tau: 1800, topApps: 5, threads: 1)
        _ = try Evaluator.evaluate(input, options: options, registry: registry)
        return log.lines.withLock { $0 }
    }

    @Test func theReplayFromTheTraceAndFromTheStoreAndTheCatchUpAgree() async throws {
        let temporary = try TemporaryStore()
        let path = try temporary.write("instant.csv", Self.text)
        let store = try temporary.open()
        _ = try Ingestor(store: store, options: .init(now: { 1_700_000_000 })).ingest(path: path)

        #expect(try Self.replayed(.files([path])) == Self.expected)
        #expect(try Self.replayed(.store(store)) == Self.expected)

        // The catch-up reads the store's time order and arranges each instant the same way.
        let repository = ModelRepository(store: store)
        let snapshot = try await repository.refresh()
        let device = try #require(snapshot.device(named: "d1"))
        let micros = Int64(Self.eight) * 1_000_000
        var told: [String] = []
        var conditions = DeviceConditions.unknown
        try await store.readTransaction {
            try await repository.forEachHistoryEvent(ofDevice: device, fromMicros: micros, beforeMicros: micros + 1) { e in
                if e.kind == .state {
                    conditions.apply(e.conditions)
                    told.append("state " + ProbePolicy.describe(conditions))
                } else {
                    told.append("\(e.kind.name) \(snapshot.appNames[e.app] ?? "?")")
                }
            }
        }
        #expect(told == Self.expected.filter { $0 != "look" })
        // A plan from 08:00 is told of what comes before the looks at 08:00, and no more.
        let beforeLooks = told.prefix { $0.hasPrefix("publish") || $0.hasPrefix("state") }
        #expect(Array(beforeLooks) == Array(Self.expected.prefix { $0 != "look" }))
    }

    @Test func aFollowingSchedulerCaughtUpFromTheStoreIsTheOneToldInTheRulesOrder() async throws {
        let temporary = try TemporaryStore()
        let path = try temporary.write("instant.csv", Self.text)
        let store = try temporary.open()
        _ = try Ingestor(store: store, options: .init(now: { 1_700_000_000 })).ingest(path: path)
        let repository = ModelRepository(store: store)
        let snapshot = try await repository.refresh()
        let device = try #require(snapshot.device(named: "d1"))
        let apps = snapshot.appNames.keys.sorted().map { Int32($0) }
        let configuration = SchedulerConfiguration(budget: 24)
        let model = ModelConfiguration()
        let caughtUp = try #require(try await snapshot.scheduler(
            of: device, apps: apps, configuration: configuration, model: model, before: Self.eight + 3600, inclusive: true))

        // The same events told by hand, each instant in the rule's order.
        var events: [StoredEvent] = []
        try store.readTransaction {
            try store.deviceHistory(ofDevice: device, beforeMicros: Int64(Self.eight + 3601) * 1_000_000) { events.append($0) }
        }
        InstantOrder.arrange(&events, time: \.timeMicros, step: ModelRepository.step(of:))
        var byHand = LearnedPolicy(
            apps: apps, model: DeviceModel(configuration: model), configuration: configuration, prior: snapshot.prior(for: device),
            mode: .following)
        var conditions = DeviceConditions.unknown
        for e in events {
            let t = Double(e.timeMicros) / 1_000_000
            if e.kind == .state {
                conditions.apply(e.conditions)
                byHand.observeConditions(conditions, at: t, utcOffsetSeconds: e.utcOffsetSeconds)
            } else {
                byHand.observe(ModelRepository.event(e))
            }
        }
        #expect(events.count == 10)
        #expect(try caughtUp.savedState() == byHand.savedState())
        #expect(caughtUp.plan(from: Self.eight + 3601) == byHand.plan(from: Self.eight + 3601))
    }
}