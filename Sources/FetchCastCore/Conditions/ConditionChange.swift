/// What one `state` row of a trace sets: any subset of the device's network, power source,
/// battery level and Low Power Mode. A field left `nil` keeps its previous value.
///
/// Five bytes, so that ``EncodedEvent`` stays compact.
public struct ConditionChange: Sendable, Hashable, Codable {
    /// The network, when the row sets it.
    public var network: NetworkCondition?
    /// The power source, when the row sets it.
    public var power: PowerCondition?
    /// The battery level in percent (0–100), when the row sets it.
    public var battery: UInt8?
    /// Whether Low Power Mode is on, when the row sets it.
    public var lowPower: Bool?

    /// Creates a change; with no arguments, one that sets nothing.
    public init(network: NetworkCondition? = nil, power: PowerCondition? = nil, battery: UInt8? = nil, lowPower: Bool? = nil) {
        self.network = network
        self.power = power
        self.battery = battery
        self.lowPower = lowPower
    }

    /// Whether the change sets nothing (every event but `state` has such a change).
    public var isEmpty: Bool { network == nil && power == nil && battery == nil && lowPower == nil }

    /// The `low_power` column's value for ``lowPower``: `on`, `off` or `nil`.
    public var lowPowerName: String? { lowPower.map { $0 ? "on" : "off" } }
}
