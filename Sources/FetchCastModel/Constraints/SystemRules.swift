import FetchCastCore

/// The operating system's own rules for background refresh, on top of an app's constraints
/// (`--system`).
public enum SystemRules: String, Sendable, Hashable, Codable, CaseIterable {
    /// No rules of the system's own.
    case none
    /// iOS (WWDC 2020, "Background execution demystified"): no background refresh in Low
    /// Power Mode or with the battery below 20% (``DeviceConditions/lowBatteryPercent``).
    case ios

    /// Whether the system lets a background fetch run under `conditions`.
    public func allows(_ conditions: DeviceConditions) -> Bool {
        switch self {
        case .none: true
        case .ios: !conditions.isLowPowerMode && !conditions.isBatteryLow
        }
    }
}
