/// A device's conditions at an instant: each field is the value of the latest `state` row at or
/// before the instant that set it, or `nil` (unknown) before the first such row.
///
/// Unknown is treated explicitly, always the same way (docs/evaluation.md, "Device
/// conditions"): an unknown network is priced and constrained as **cellular** (metered, LTE:
/// the v1 assumption, so traces without state rows mean what they meant), an unknown power
/// source as **battery**, an unknown battery level as **not low**, and unknown Low Power Mode
/// as **off**.
public struct DeviceConditions: Sendable, Hashable, Codable {
    /// The network, or `nil` when unknown.
    public var network: NetworkCondition?
    /// The power source, or `nil` when unknown.
    public var power: PowerCondition?
    /// The battery level in percent, or `nil` when unknown.
    public var battery: UInt8?
    /// Whether Low Power Mode is on, or `nil` when unknown.
    public var lowPower: Bool?

    /// A battery level below this (percent) is low: iOS stops background refresh below about
    /// 20% (WWDC 2020, "Background execution demystified"); Android's battery-low broadcast
    /// comes at 15%, so this is the stricter of the two.
    public static let lowBatteryPercent: UInt8 = 20

    /// Nothing known: the state before a device's first `state` row.
    public static let unknown = DeviceConditions()

    /// Creates conditions; with no arguments, all unknown.
    public init(network: NetworkCondition? = nil, power: PowerCondition? = nil, battery: UInt8? = nil, lowPower: Bool? = nil) {
        self.network = network
        self.power = power
        self.battery = battery
        self.lowPower = lowPower
    }

    /// Applies a `state` row: every field it sets replaces the current value.
    public mutating func apply(_ change: ConditionChange) {
        if let v = change.network { network = v }
        if let v = change.power { power = v }
        if let v = change.battery { battery = v }
        if let v = change.lowPower { lowPower = v }
    }

    /// The network a fetch uses: unknown counts as cellular.
    public var effectiveNetwork: NetworkCondition { network ?? .cellular }

    /// Whether the device is on external power: unknown counts as on battery.
    public var isCharging: Bool { power == .charging }

    /// Whether the battery is low (below ``lowBatteryPercent``): unknown counts as not low.
    public var isBatteryLow: Bool { battery.map { $0 < Self.lowBatteryPercent } ?? false }

    /// Whether Low Power Mode is on: unknown counts as off.
    public var isLowPowerMode: Bool { lowPower ?? false }

    /// Whether a fetch now goes over an unmetered network (Wi-Fi).
    public var isUnmetered: Bool { effectiveNetwork == .wifi }

    /// Whether a fetch now can reach the network at all.
    public var isConnected: Bool { effectiveNetwork != .offline }
}
