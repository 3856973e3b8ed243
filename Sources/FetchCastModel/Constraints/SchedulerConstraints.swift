import FetchCastCore

/// The constraints a scheduler keeps to, by its app ids: a ``FetchConstraints`` resolved for the
/// apps it fetches for (``FetchConstraints/resolved(apps:names:)``).
///
/// Part of ``SchedulerConfiguration`` (``SchedulerConfiguration/constraints``), so the live
/// policy, every plan and the saved state of a scheduler are made under the same constraints: a
/// condition-aware scheduler never weighs a fetch whose constraints fail under the conditions it
/// knows, so such a moment neither is fetched at nor counts as an opportunity for its pacer.
public struct SchedulerConstraints: Sendable, Hashable, Codable {
    /// One app's constraints.
    public struct Entry: Sendable, Hashable, Codable {
        public var app: Int32
        public var constraints: AppConstraints
    }

    /// The system's rules, for every app.
    public private(set) var system: SystemRules
    /// The apps with constraints, by app id (sorted: the encoded form keys saved state).
    public private(set) var apps: [Entry]

    /// Creates constraints from each app's (apps without an entry, or with empty constraints,
    /// have none).
    public init(system: SystemRules = .none, apps: [Int32: AppConstraints]) {
        self.system = system
        self.apps = apps.filter { !$0.value.isEmpty }.map { Entry(app: $0.key, constraints: $0.value) }.sorted { $0.app < $1.app }
    }

    /// Whether nothing is ever refused.
    public var isEmpty: Bool { system == .none && apps.isEmpty }

    /// Whether a fetch for `app` may run under `conditions`.
    public func allows(_ app: Int32, under conditions: DeviceConditions) -> Bool {
        guard system.allows(conditions) else { return false }
        return apps.first { $0.app == app }?.constraints.allows(conditions) ?? true
    }
}

extension FetchConstraints {
    /// These constraints for a scheduler of `apps`, whose names `names` gives; `nil` when they
    /// refuse nothing for them.
    public func resolved(apps: [Int32], names: (Int32) -> String) -> SchedulerConstraints? {
        var byApp: [Int32: AppConstraints] = [:]
        for app in apps { byApp[app] = constraints(forApp: names(app)) }
        let rules = SchedulerConstraints(system: system, apps: byApp)
        return rules.isEmpty ? nil : rules
    }
}
