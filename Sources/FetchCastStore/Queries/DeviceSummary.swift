import FetchCastCore
import FetchCastTrace

/// One device as `fetchcast devices` lists it: how many events and launches the store holds
/// for it, over what span, and its most launched apps.
public struct DeviceSummary: Sendable, Hashable, Codable {
    /// An app and how often the device launched it.
    public struct AppLaunches: Sendable, Hashable, Codable {
        /// The app id.
        public var app: String
        /// Launches of the app on the device.
        public var launches: Int64

        /// Creates a count.
        public init(app: String, launches: Int64) {
            self.app = app
            self.launches = launches
        }
    }

    /// The JSON schema version of this record.
    public var schema: Int = 1
    /// The device id, exactly as ingested.
    public var device: String
    /// Events of the device (publishes to every device are not counted).
    public var events: Int64
    /// Launches among them.
    public var launches: Int64
    /// The device's first and last event instants (ISO 8601, UTC).
    public var firstEvent: String
    public var lastEvent: String
    /// The most launched apps, most launches first (ties in app id order); apps never launched are left out.
    public var topApps: [AppLaunches]

    enum CodingKeys: String, CodingKey {
        case schema, device, events, launches
        case firstEvent = "first_event"
        case lastEvent = "last_event"
        case topApps = "top_apps"
    }
}

extension DeviceSummary {
    /// Creates a summary (an engine's answer to ``EventLogReader/devices(top:)``).
    package init(device: String, events: Int64, launches: Int64, firstEvent: String, lastEvent: String, topApps: [AppLaunches]) {
        self.device = device
        self.events = events
        self.launches = launches
        self.firstEvent = firstEvent
        self.lastEvent = lastEvent
        self.topApps = topApps
    }
}

extension Store {
    /// Every device with its event and launch counts, time span and `top` most launched apps,
    /// in device id order (byte order).
    ///
    /// Reads the per-file aggregates kept at ingest in one grouped query, never the events.
    /// - Parameter top: How many of each device's most launched apps to list (0 for none).
    /// - Complexity: O(files × devices × apps), independent of the number of events.
    public func devices(top: Int = 3) throws(StoreError) -> [DeviceSummary] {
        // Per (device, app): launches, events and span; then each device's totals and the rank
        // of each app by launches, with window functions, so one statement answers for every
        // device (no query per device).
        let s = try connection.prepare("""
            WITH per_app AS (
                SELECT f.device_id, a.name AS app, sum(f.n) AS events,
                       sum(CASE WHEN f.kind = ? THEN f.n ELSE 0 END) AS launches,
                       min(f.first_us) AS first_us, max(f.last_us) AS last_us
                FROM file_counts f JOIN apps a ON a.id = f.app_id
                WHERE f.device_id IS NOT NULL
                GROUP BY f.device_id, f.app_id
            ), ranked AS (
                SELECT device_id, app, launches,
                       sum(events) OVER device AS device_events, sum(launches) OVER device AS device_launches,
                       min(first_us) OVER device AS first_us, max(last_us) OVER device AS last_us,
                       row_number() OVER (PARTITION BY device_id ORDER BY launches DESC, app) AS rank
                FROM per_app
                WINDOW device AS (PARTITION BY device_id)
            )
            SELECT d.name, r.device_events, r.device_launches, r.first_us, r.last_us, r.app, r.launches, r.device_id
            FROM ranked r JOIN devices d ON d.id = r.device_id
            WHERE r.rank <= max(?, 1)
            ORDER BY d.name, r.rank
            """)
        try s.bind([.integer(Int64(EventKind.launch.rawValue)), .integer(Int64(top))])
        var out: [DeviceSummary] = []
        var lastID: Int64?
        while try s.step() {
            // Grouped by the store's id, not by name: Swift's `==` on strings treats canonically
            // equivalent ids ("é" precomposed and decomposed) as one, the store does not.
            if s.int(7) != lastID {
                lastID = s.int(7)
                out.append(DeviceSummary(
                    device: s.text(0), events: s.int(1), launches: s.int(2),
                    firstEvent: Timestamp.format(micros: s.int(3), utcOffsetSeconds: 0),
                    lastEvent: Timestamp.format(micros: s.int(4), utcOffsetSeconds: 0), topApps: []))
            }
            let launches = s.int(6)
            if launches > 0 && out[out.count - 1].topApps.count < top {
                out[out.count - 1].topApps.append(.init(app: s.text(5), launches: launches))
            }
        }
        return out
    }
}
