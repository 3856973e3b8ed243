import FetchCastCore

/// What one app's background fetches require, in the terms of Android WorkManager's
/// `Constraints.Builder()` (`setRequiredNetworkType`, `setRequiresCharging`,
/// `setRequiresBatteryNotLow`) and iOS's `BGProcessingTaskRequest`
/// (`requiresNetworkConnectivity`, `requiresExternalPower`).
public struct AppConstraints: Sendable, Hashable, Codable {
    /// The network needed, or `nil` for none (a fetch while offline is then made and fails).
    public var network: NetworkRequirement?
    /// Only on external power.
    public var charging: Bool
    /// Only when the battery is not low (≥ ``DeviceConditions/lowBatteryPercent``).
    public var batteryNotLow: Bool

    enum CodingKeys: String, CodingKey {
        case network, charging
        case batteryNotLow = "battery_not_low"
    }

    /// No requirement: every fetch may run.
    public static let none = AppConstraints()

    /// Creates constraints; with no arguments, none.
    public init(network: NetworkRequirement? = nil, charging: Bool = false, batteryNotLow: Bool = false) {
        self.network = network
        self.charging = charging
        self.batteryNotLow = batteryNotLow
    }

    /// Whether nothing is required.
    public var isEmpty: Bool { network == nil && !charging && !batteryNotLow }

    /// Whether a fetch may run under `conditions` (unknown fields as ``DeviceConditions`` says).
    public func allows(_ conditions: DeviceConditions) -> Bool {
        if let network, !network.isMet(by: conditions) { return false }
        if charging && !conditions.isCharging { return false }
        if batteryNotLow && conditions.isBatteryLow { return false }
        return true
    }
}
