import FetchCastCore

/// Every app's fetch constraints and the system's rules: what decides whether a fetch may run
/// at an instant, given the device's conditions then.
///
/// An app's own entry replaces the `"*"` entry as a whole (keys it leaves out are not
/// required, whatever `"*"` says); an app with no entry gets `"*"`'s, or none.
public struct FetchConstraints: Sendable, Hashable {
    /// Constraints by app id; `"*"` is every app without its own entry.
    public var apps: [String: AppConstraints]
    /// The system's rules.
    public var system: SystemRules

    /// The key that stands for every app.
    public static let everyApp = "*"

    /// No constraints and no system rules: every fetch runs (the v1 replay).
    public static let none = FetchConstraints()

    /// Creates constraints.
    public init(apps: [String: AppConstraints] = [:], system: SystemRules = .none) {
        self.apps = apps
        self.system = system
    }

    /// Whether nothing is ever refused.
    public var isEmpty: Bool { system == .none && apps.values.allSatisfy(\.isEmpty) }

    /// The constraints of one app: its own entry, else `"*"`'s, else none.
    public func constraints(forApp app: String) -> AppConstraints {
        apps[app] ?? apps[Self.everyApp] ?? .none
    }

    /// Whether a fetch for `app` may run under `conditions`.
    public func allows(app: String, under conditions: DeviceConditions) -> Bool {
        system.allows(conditions) && constraints(forApp: app).allows(conditions)
    }
}
