import FetchCastModel
import FetchCastTrace

/// What `fetchcast model` shows for a device, as a value (the HTTP service answers it as JSON).
package struct ModelDocument: Sendable, Hashable, Codable {
    /// Quiet hours of one app.
    package struct Quiet: Sendable, Hashable, Codable {
        /// The app.
        package var app: String
        /// Local hours (0–23) when new content averages under 0.5 an hour.
        package var hours: [Int]
    }

    /// One co-usage pair.
    package struct Pair: Sendable, Hashable, Codable {
        /// The app launched first.
        package var trigger: String
        /// The app whose session may follow.
        package var app: String
        /// P(a session of `app` within τ after a launch of `trigger`).
        package var probability: Double
        /// Recency-weighted launches of `trigger` behind it.
        package var support: Double
    }

    /// Record schema version.
    package var schema = 1
    /// The device.
    package var device: String
    /// The app shown, or `nil` for all the device's top apps together.
    package var app: String?
    /// Expected session starts per hour, by local hour of week (168 values, Monday 00:00 first).
    package var sessionsPerHour: [Double]
    /// Recency-weighted hours observed.
    package var observedHours: Double
    /// Quiet hours of the apps shown (apps with content evidence only).
    package var quietHours: [Quiet]
    /// Strongest co-usage pairs into the apps shown.
    package var coUsage: [Pair]

    enum CodingKeys: String, CodingKey {
        case schema, device, app
        case sessionsPerHour = "sessions_per_hour"
        case observedHours = "observed_hours"
        case quietHours = "quiet_hours"
        case coUsage = "co_usage"
    }
}

extension ModelView {
    /// The grid, quiet hours and co-usage pairs that ``write(to:)`` prints, as a value.
    package func document() -> ModelDocument {
        let name = { (id: Int32) in snapshot.appNames[Int64(id)] ?? String(id) }
        let apps = appID.map { [$0] } ?? Array(model.appsBySessions.prefix(5))
        return ModelDocument(
            device: deviceName, app: appID.map(name), sessionsPerHour: grid(),
            observedHours: model.observedHours(at: model.lastEventTime ?? 0),
            quietHours: apps.compactMap { app in quietHours(app: app).map { ModelDocument.Quiet(app: name(app), hours: $0) } },
            coUsage: strongestPairs().map { ModelDocument.Pair(trigger: name($0.0), app: name($0.1), probability: $0.2, support: $0.3) })
    }
}
