/// The network a device is on, as a `state` row's `network` column gives it.
public enum NetworkCondition: UInt8, Sendable, Hashable, Codable, CaseIterable {
    /// An unmetered Wi-Fi network.
    case wifi = 0
    /// A metered cellular network (priced as LTE).
    case cellular = 1
    /// No network: a fetch fails.
    case offline = 2

    /// The name used in trace files and in the store's `events` view.
    public var name: String {
        switch self {
        case .wifi: "wifi"
        case .cellular: "cellular"
        case .offline: "offline"
        }
    }

    /// Parses a trace-file name (`wifi`, `cellular`, `offline`); `nil` for anything else.
    public init?(name: String) {
        guard let match = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = match
    }
}
