import FetchCastCore
import FetchCastModel
import FetchCastTrace
import Foundation
@testable import FetchCastReplay
import FetchCastTestSupport

/// Builds tiny traces: times are seconds after a fixed local midnight (2024-01-01T00:00 in the
/// given offset), so hand computations stay small.
struct Trace {
    static let midnight: Int64 = 1_704_067_200  // 2024-01-01T00:00:00Z, a Monday
    var offset: Int32 = 0
    var events: [TraceEvent] = []

    init(offset: Int32 = 0) { self.offset = offset }

    /// Unix seconds of `seconds` after local midnight of 2024-01-01.
    func at(_ seconds: Double) -> Double { Double(Self.midnight) + seconds - Double(offset) }

    mutating func launch(_ app: String, at s: Double, device: String = "d1") {
        add(device, app, .launch, s)
    }

    mutating func fetch(_ app: String, at s: Double, result: FetchResult = .newData, device: String = "d1") {
        add(device, app, .fetch, s, result: result)
    }

    mutating func publish(_ app: String, at s: Double, device: String = "") {
        add(device, app, .publish, s)
    }

    mutating func state(_ change: ConditionChange, at s: Double, device: String = "d1") {
        events.append(TraceEvent(
            timeMicros: Int64((at(s) * 1_000_000).rounded()), utcOffsetSeconds: offset, device: device, app: "",
            kind: .state, conditions: change))
    }

    private mutating func add(_ device: String, _ app: String, _ kind: EventKind, _ s: Double, result: FetchResult? = nil) {
        events.append(TraceEvent(
            timeMicros: Int64((at(s) * 1_000_000).rounded()), utcOffsetSeconds: offset, device: device, app: app,
            kind: kind, result: result))
    }
}

/// A policy that fetches at given instants (Unix seconds), for the energy and content rules.
struct ScriptedPolicy: FetchPolicy {
    var plan: [(time: Double, app: Int32)]
    var results: [FetchResult] = []
    var index = 0

    var nextWakeup: Double? { index < plan.count ? plan[index].time : nil }

    mutating func wake(at time: Double, into fetches: inout [PlannedFetch]) {
        while index < plan.count && plan[index].time <= time {
            fetches.append(PlannedFetch(app: plan[index].app, reason: .retry))
            index += 1
        }
    }

    mutating func observe(_ event: DeviceEvent) {}
    mutating func didFetch(app: Int32, at time: Double, result: FetchResult) { results.append(result) }
}

/// A policy that reacts to a launch at the launch's own instant: a contract violation.
struct EagerPolicy: FetchPolicy {
    var nextWakeup: Double?
    mutating func wake(at time: Double, into fetches: inout [PlannedFetch]) { nextWakeup = nil }
    mutating func observe(_ event: DeviceEvent) { if event.kind == .launch { nextWakeup = event.time } }
    mutating func didFetch(app: Int32, at time: Double, result: FetchResult) {}
}

extension Evaluation {
    /// The summary row of a policy (and budget, when several).
    func row(_ policy: String, _ budget: Double? = nil) -> DeviceMetrics {
        summary.first { $0.policy == policy && (budget == nil || $0.budget == budget) }!.metrics
    }

    /// The index of a summary row, for the detail records.
    func index(_ policy: String, _ budget: Double? = nil) -> Int {
        summary.firstIndex { $0.policy == policy && (budget == nil || $0.budget == budget) }!
    }

    func app(_ name: String) -> Int32 { Int32(appNames.firstIndex(of: name)!) }
}

/// Runs a trace in memory with detail records.
func evaluate(
    _ trace: Trace, policies: [String] = ["none"], budgets: [Double] = [24], tau: Double = 1800, topApps: Int = 5,
    registry: PolicyRegistry = .standard, threads: Int = 1, constraints: FetchConstraints = .none
) throws -> Evaluation {
    var options = EvaluationOptions(policies: policies, budgets: budgets, tau: tau, topApps: topApps, threads: threads)
    options.constraints = constraints
    return try Evaluator.evaluate(.events(trace.events), options: options, registry: registry, collectDetail: true)
}

/// A registry with a scripted policy whose fetch times are seconds after local midnight.
func scripted(_ trace: Trace, _ fetches: [(Double, String)]) -> PolicyRegistry {
    var r = PolicyRegistry.standard
    // Canonical ids are the ranks of the names in byte order among every app of the trace.
    let sorted = Set(trace.events.filter { $0.kind != .state }.map(\.app)).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    let plan = fetches.map { (time: trace.at($0.0), app: Int32(sorted.firstIndex(of: $0.1)!)) }
    r.register("scripted") { _ in ScriptedPolicy(plan: plan) }
    return r
}

/// A seeded random trace: a few devices with routines over a few apps, some publishes, in time order.
func randomTrace(seed: UInt64, devices: Int = 4, events: Int = 3000) -> Trace {
    var rng = SeededGenerator(seed: seed)
    var trace = Trace()
    let apps = ["a.mail", "b.news", "c.chat", "d.maps", "e.game", "f.music", "g.shop"]
    var t = 0.0
    for _ in 0..<events {
        t += Double(Int.random(in: 1...1800, using: &rng))
        let d = Int.random(in: 0..<devices, using: &rng)
        let roll = Int.random(in: 0..<20, using: &rng)
        let app = apps[min(Int.random(in: 0..<apps.count, using: &rng), Int.random(in: 0..<apps.count, using: &rng))]
        if roll == 0 {
            trace.publish(app, at: t)
        } else if roll == 1 {
            trace.fetch(app, at: t, result: .noData, device: "dev\(d)")
        } else {
            trace.launch(app, at: t, device: "dev\(d)")
            if roll == 2 { trace.launch(app, at: t, device: "dev\(d)") }  // a tie
        }
    }
    return trace
}

