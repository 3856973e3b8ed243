import FetchCastStore

/// What `fetchcast export` writes: one table each.
public enum ExportKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// The rows of the store's `events` view.
    case events
    /// Per device, app and hour of week: launch probability, session and new-content rates.
    case model
    /// Per device and ordered app pair: P(a session of the second app within τ after a launch of the first).
    case cousage
    /// The fetches `fetchcast predict` would plan over a window.
    case predictions

    /// The column names, in order (for `events`, without the condition columns, which are
    /// appended when the store holds `state` rows).
    public var columns: [String] {
        switch self {
        case .events:
            return Array(FetchCastStore.Store.eventColumns.dropLast(FetchCastStore.Store.conditionColumnCount))
        case .model:
            return ["device", "app", "weekday", "hour", "launch_probability", "session_rate_per_hour",
                    "new_data_rate_per_hour", "observed_hours", "sessions"]
        case .cousage:
            return ["device", "app", "next_app", "probability", "support"]
        case .predictions:
            return ["device", "app", "fetch_at", "launch_probability", "new_data_probability", "reason"]
        }
    }
}

/// How exported tables are written.
public enum ExportFormat: String, Sendable, Hashable, Codable, CaseIterable {
    /// RFC 4180 CSV with a header row.
    case csv
    /// JSON Lines: one object per row with `schema` and one key per column.
    case json
}
