import FetchCastModel
/// What an evaluation produced: one row per (policy, budget), and per device.
public struct Evaluation: Sendable {
    /// One row of `summary.csv` (``device`` is `nil`) or `devices.csv`.
    public struct Row: Sendable, Hashable {
        /// The policy name.
        public var policy: String
        /// The daily budget B.
        public var budget: Double
        /// The device id (`devices.csv` rows only).
        public var device: String?
        /// The counters.
        public var metrics: DeviceMetrics
    }

    /// One row per (policy, budget), in `--policies` then `--budgets` order.
    public var summary: [Row]
    /// One row per (policy, budget, device), devices in ascending byte order of their ids.
    public var devices: [Row]
    /// Every input's identity.
    public var inputs: [InputDigest]
    /// Events replayed (after `--devices`, `--from`, `--to`).
    public var eventsReplayed: Int64
    /// Remarks for the user (e.g. a policy that is a stand-in).
    public var notes: [String]
    /// Whether device conditions played a part (the input had `state` rows, or constraints or
    /// system rules were set): the condition columns are then written.
    public var usesConditions = false
    /// Whether any fetch row of the input gave `bytes` (else cellular bytes are unknown).
    public var bytesKnown = false
    /// Detail records kept in memory when asked (``Evaluator/evaluate(_:options:registry:collectDetail:)``),
    /// per summary row.
    package var launchRecords: [[LaunchRecord]] = []
    package var fetchRecords: [[FetchRecord]] = []
    package var decisionRecords: [[DecisionRecord]] = []
    package var planRecords: [[PlanRecord]] = []
    package var deliveryRecords: [[DeliveryRecord]] = []
    /// How push policies' fetches were delivered (semantics d1), and the (policy) names that
    /// went through it: `delivery.csv` is written for them when the delivery is a push service.
    public var delivery = DeliveryOptions()
    public var pushedPolicies: [String] = []
    /// App names by canonical id, and device names by index, for the records.
    package var appNames: [String] = []
    package var deviceNames: [String] = []
}
