/// What a token may do.
package enum Scope: String, Sendable, Hashable, CaseIterable {
    /// Plans, devices, models, metrics.
    case read
    /// `POST /v1/events` only.
    case ingest
    /// Everything.
    case admin

    /// Whether a token of this scope may use a route that needs `needed`.
    func allows(_ needed: Scope) -> Bool { self == .admin || self == needed }
}

/// Who made a request: the token's name and scope (never the token itself).
package struct TokenIdentity: Sendable, Hashable {
    /// The token's name in the tokens file.
    package var name: String
    /// What it may do.
    package var scope: Scope
}
