import FetchCastCore
import FetchCastTrace

/// A store's contents at a glance (`fetchcast stats`).
public struct StoreStats: Sendable, Hashable, Codable {
    /// The JSON schema version of this record.
    public var schema: Int = 1
    /// Files ingested.
    public var files: Int64
    /// Events stored.
    public var events: Int64
    /// Devices with at least one event.
    public var devices: Int64
    /// Apps with at least one event.
    public var apps: Int64
    /// Events by kind.
    public var launches: Int64
    public var fetches: Int64
    public var publishes: Int64
    /// `state` rows (device conditions); `nil` when there are none, so that the record of a
    /// store without them is what it was before they existed.
    public var states: Int64?
    /// Rows rejected under `--skip-invalid`, over all files.
    public var rejected: Int64
    /// The first and last event instants (ISO 8601, UTC), when there are events.
    public var firstEvent: String?
    public var lastEvent: String?
    /// Distinct (device, local calendar day) pairs with at least one launch: "days with
    /// launches (device-days)" in `fetchcast stats`. Not `evaluate`'s `device_days`, which sums
    /// each device's span from its first to its last launch (quiet days included) in days.
    public var activeDeviceDays: Int64
    /// Launches per day with launches (0 when there are none).
    public var launchesPerDeviceDay: Double
    /// The database user the session runs as (PostgreSQL's `current_user`: from the URL, else
    /// `PGUSER`, else the system user); `nil` for an SQLite store, whose record is then what it
    /// was before this existed.
    public var connectedAs: String?

    enum CodingKeys: String, CodingKey {
        case schema, files, events, devices, apps, launches, fetches, publishes, states, rejected
        case connectedAs = "connected_as"
        case firstEvent = "first_event"
        case lastEvent = "last_event"
        case activeDeviceDays = "active_device_days"
        case launchesPerDeviceDay = "launches_per_device_day"
    }
}

extension StoreStats {
    /// Creates a summary (an engine's answer to ``EventLogReader/stats()``).
    package init(
        files: Int64, events: Int64, devices: Int64, apps: Int64, launches: Int64, fetches: Int64, publishes: Int64,
        states: Int64?, rejected: Int64, firstEvent: String?, lastEvent: String?, activeDeviceDays: Int64,
        launchesPerDeviceDay: Double
    ) {
        self.files = files
        self.events = events
        self.devices = devices
        self.apps = apps
        self.launches = launches
        self.fetches = fetches
        self.publishes = publishes
        self.states = states
        self.rejected = rejected
        self.firstEvent = firstEvent
        self.lastEvent = lastEvent
        self.activeDeviceDays = activeDeviceDays
        self.launchesPerDeviceDay = launchesPerDeviceDay
    }

    /// Creates a summary from the counts every engine keeps per file: events by kind (raw
    /// ``EventKind`` values), the span of event instants (Unix microseconds), and the rest as
    /// counted; the totals, the instants' text and the launches per device-day are derived here,
    /// the same on every engine.
    package init(
        files: Int64, rejected: Int64, eventsByKind byKind: [Int64: Int64], devices: Int64, apps: Int64,
        spanMicros: (first: Int64, last: Int64)?, activeDeviceDays: Int64
    ) {
        let launches = byKind[Int64(EventKind.launch.rawValue)] ?? 0
        self.init(
            files: files, events: byKind.values.reduce(0, +), devices: devices, apps: apps,
            launches: launches, fetches: byKind[Int64(EventKind.fetch.rawValue)] ?? 0,
            publishes: byKind[Int64(EventKind.publish.rawValue)] ?? 0,
            states: byKind[Int64(EventKind.state.rawValue)], rejected: rejected,
            firstEvent: spanMicros.map { Timestamp.format(micros: $0.first, utcOffsetSeconds: 0) },
            lastEvent: spanMicros.map { Timestamp.format(micros: $0.last, utcOffsetSeconds: 0) },
            activeDeviceDays: activeDeviceDays,
            launchesPerDeviceDay: activeDeviceDays > 0 ? Double(launches) / Double(activeDeviceDays) : 0)
    }
}

extension Store {
    /// Summarises the store from its per-file aggregates, without scanning events.
    ///
    /// - Complexity: O(files × devices × apps), independent of the number of events.
    public func stats() throws(StoreError) -> StoreStats {
        try connection.transaction(.deferred) { () throws(StoreError) in try statsInSnapshot() }
    }

    private func statsInSnapshot() throws(StoreError) -> StoreStats {
        let c = connection
        let files = try c.scalarInt("SELECT count(*) FROM files")
        let rejected = try c.scalarInt("SELECT COALESCE(sum(rejected), 0) FROM files")
        var byKind: [Int64: Int64] = [:]
        let kinds = try c.prepare("SELECT kind, sum(n) FROM file_counts GROUP BY kind")
        while try kinds.step() { byKind[kinds.int(0)] = kinds.int(1) }
        let devices = try c.scalarInt("SELECT count(DISTINCT device_id) FROM file_counts WHERE device_id IS NOT NULL")
        let apps = try c.scalarInt("SELECT count(DISTINCT app_id) FROM file_counts WHERE kind != \(EventKind.state.rawValue)")
        let span = try c.prepare("SELECT min(first_us), max(last_us) FROM file_counts")
        var spanMicros: (first: Int64, last: Int64)?
        if try span.step(), !span.isNull(0) { spanMicros = (span.int(0), span.int(1)) }
        let deviceDays = try c.scalarInt("SELECT count(*) FROM (SELECT DISTINCT device_id, day FROM file_days)")
        return StoreStats(
            files: files, rejected: rejected, eventsByKind: byKind, devices: devices, apps: apps, spanMicros: spanMicros,
            activeDeviceDays: deviceDays)
    }
}
