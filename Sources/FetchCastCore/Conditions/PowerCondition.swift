/// Whether a device is plugged in, as a `state` row's `power` column gives it.
public enum PowerCondition: UInt8, Sendable, Hashable, Codable, CaseIterable {
    /// On external power: a fetch costs the battery nothing.
    case charging = 0
    /// On battery.
    case battery = 1

    /// The name used in trace files and in the store's `events` view.
    public var name: String {
        switch self {
        case .charging: "charging"
        case .battery: "battery"
        }
    }

    /// Parses a trace-file name (`charging`, `battery`); `nil` for anything else.
    public init?(name: String) {
        guard let match = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = match
    }
}
