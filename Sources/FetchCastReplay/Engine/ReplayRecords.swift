import FetchCastCore
import FetchCastModel
import FetchCastTrace

/// One scored launch, for `launches.csv.gz`.
package struct LaunchRecord: Sendable, Hashable {
    package var device: Int
    package var app: Int32
    package var timeMicros: Int64
    package var utcOffsetSeconds: Int32
    package var staleness: Double
    package var needy: Bool
    package var fresh: Bool
    package var contentFresh: Bool
    /// The device-local id (1-based) of the fetch whose refresh the launch saw, if the latest
    /// refresh was a fetch.
    package var coveringFetch: Int?
}

/// One fetch the policy made, for `fetches.csv.gz`.
package struct FetchRecord: Sendable, Hashable {
    package var device: Int
    /// 1-based, per device and replay.
    package var id: Int
    package var app: Int32
    package var time: Double
    package var utcOffsetSeconds: Int32
    package var result: FetchResult
    /// The radio session (wakeup), 1-based.
    package var wakeup: Int
    package var joules: Double
    package var reason: FetchReason
}

/// One fetch a policy weighed at a wakeup, for `decisions.csv.gz`.
package struct DecisionRecord: Sendable, Hashable {
    package var device: Int
    package var time: Double
    package var utcOffsetSeconds: Int32
    package var decision: ConsideredFetch
}

/// One plan a policy asked for, for `plans.csv.gz`.
package struct PlanRecord: Sendable, Hashable {
    package var device: Int
    package var utcOffsetSeconds: Int32
    package var plan: MadePlan
}

/// Receives a replay's records as they are produced (in time order per device).
package protocol ReplayRecorder: AnyObject {
    func record(_ launch: LaunchRecord)
    func record(_ fetch: FetchRecord)
    func record(_ decision: DecisionRecord)
    func record(_ plan: PlanRecord)
    /// What became of one push (semantics d1). The default keeps nothing: only the in-memory
    /// recorder does.
    func record(_ delivery: DeliveryRecord)
    /// Called once when the device's replay is over.
    func finish()
}

extension ReplayRecorder {
    package func record(_ delivery: DeliveryRecord) {}
}

/// Keeps every record in memory (tests, small embeddings).
package final class MemoryRecorder: ReplayRecorder {
    package private(set) var launches: [LaunchRecord] = []
    package private(set) var fetches: [FetchRecord] = []
    package private(set) var decisions: [DecisionRecord] = []
    package private(set) var plans: [PlanRecord] = []
    package private(set) var deliveries: [DeliveryRecord] = []
    package init() {}
    package func record(_ launch: LaunchRecord) { launches.append(launch) }
    package func record(_ fetch: FetchRecord) { fetches.append(fetch) }
    package func record(_ decision: DecisionRecord) { decisions.append(decision) }
    package func record(_ plan: PlanRecord) { plans.append(plan) }
    package func record(_ delivery: DeliveryRecord) { deliveries.append(delivery) }
    package func finish() {}
}
