import FetchCastCore
import FetchCastTrace

/// One stored event with the store's numeric ids.
package struct StoredEvent: Sendable, Hashable {
    /// The event's id (insertion order).
    package var id: Int64
    /// Microseconds since the Unix epoch, UTC.
    package var timeMicros: Int64
    /// UTC offset, seconds.
    package var utcOffsetSeconds: Int32
    /// The device id (`devices.id`), `nil` for a publish to every device.
    package var device: Int64?
    /// The app id (`apps.id`).
    package var app: Int64
    /// What happened.
    package var kind: EventKind
    /// The fetch result.
    package var result: FetchResult?
    /// Bytes, when known.
    package var bytes: Int64?
    /// Duration in ms, when known.
    package var durationMs: Int64?
    /// What a `state` row sets (empty for every other kind).
    package var conditions = ConditionChange()

    /// Creates an event.
    package init(
        id: Int64, timeMicros: Int64, utcOffsetSeconds: Int32, device: Int64?, app: Int64, kind: EventKind,
        result: FetchResult? = nil, bytes: Int64? = nil, durationMs: Int64? = nil, conditions: ConditionChange = ConditionChange()
    ) {
        self.id = id
        self.timeMicros = timeMicros
        self.utcOffsetSeconds = utcOffsetSeconds
        self.device = device
        self.app = app
        self.kind = kind
        self.result = result
        self.bytes = bytes
        self.durationMs = durationMs
        self.conditions = conditions
    }
}

extension Store {
    /// The columns ``storedEvent(_:)`` reads, in its order.
    static let storedEventColumns =
        "id, time_us, utc_offset_s, device_id, app_id, kind, result, bytes, duration_ms, network, power, battery, low_power"

    /// The event in the current row of a statement that selects ``storedEventColumns``.
    /// - Throws: ``StoreError`` naming the row when a stored value is unknown to this build.
    func storedEvent(_ s: Statement) throws(StoreError) -> StoredEvent {
        let id = s.int(0)
        return StoredEvent(
            id: id, timeMicros: s.int(1), utcOffsetSeconds: Int32(truncatingIfNeeded: s.int(2)),
            device: s.optionalInt(3), app: s.int(4), kind: try kind(s.int(5), row: id),
            result: try s.optionalInt(6).map { v throws(StoreError) in try result(v, row: id) }, bytes: s.optionalInt(7),
            durationMs: s.optionalInt(8), conditions: try conditions(s, from: 9, row: id))
    }

    /// The devices with events after `afterID`, in id order, and whether any of those events
    /// is a publish to every device: what a fold of the new events changes.
    /// - Complexity: O(events after `afterID`), read by SQLite; nothing else copied out.
    package func devicesWithEvents(afterID: Int64) throws(StoreError) -> (devices: [Int64], everyDevice: Bool) {
        let s = try connection.prepare("SELECT DISTINCT device_id FROM event_log WHERE id > ? ORDER BY device_id")
        try s.bind([.integer(afterID)])
        var devices: [Int64] = []
        var everyDevice = false
        while try s.step() {
            if let device = s.optionalInt(0) { devices.append(device) } else { everyDevice = true }
        }
        return (devices, everyDevice)
    }

    /// The event kind stored as `value` in `event_log` row `row`.
    /// - Throws: ``StoreError`` naming the row when this build does not know the value.
    func kind(_ value: Int64, row: Int64) throws(StoreError) -> EventKind {
        guard let kind = UInt8(exactly: value).flatMap(EventKind.init(rawValue:)) else {
            throw .unknownValue(path: path, table: "event_log", row: row, column: "kind", value: value)
        }
        return kind
    }

    /// The fetch result stored as `value` in `event_log` row `row`.
    /// - Throws: ``StoreError`` naming the row when this build does not know the value.
    func result(_ value: Int64, row: Int64) throws(StoreError) -> FetchResult {
        guard let result = UInt8(exactly: value).flatMap(FetchResult.init(rawValue:)) else {
            throw .unknownValue(path: path, table: "event_log", row: row, column: "result", value: value)
        }
        return result
    }

    /// The condition columns `network, power, battery, low_power` starting at column `first`
    /// of `event_log` row `row`.
    /// - Throws: ``StoreError`` naming the row and column when a network or power value is unknown
    ///   to this build, or a battery level is outside 0–100 (ingest stores no other).
    func conditions(_ s: Statement, from first: Int32, row: Int64) throws(StoreError) -> ConditionChange {
        func decoded<T>(_ column: Int32, _ name: String, _ decode: (Int64) -> T?) throws(StoreError) -> T? {
            guard let value = s.optionalInt(column) else { return nil }
            guard let decoded = decode(value) else {
                throw .unknownValue(path: path, table: "event_log", row: row, column: name, value: value)
            }
            return decoded
        }
        return ConditionChange(
            network: try decoded(first, "network") { UInt8(exactly: $0).flatMap(NetworkCondition.init(rawValue:)) },
            power: try decoded(first + 1, "power") { UInt8(exactly: $0).flatMap(PowerCondition.init(rawValue:)) },
            battery: try decoded(first + 2, "battery") { (0...100).contains($0) ? UInt8($0) : nil },
            lowPower: try decoded(first + 3, "low_power") { $0 == 0 || $0 == 1 ? $0 == 1 : nil })
    }

    /// The highest event id (0 for an empty store).
    package func lastEventID() throws(StoreError) -> Int64 {
        let s = try connection.cached("SELECT COALESCE(max(id), 0) FROM event_log")
        defer { s.reset() }
        return try s.step() ? s.int(0) : 0
    }

    /// Device names by id, of the devices with an id greater than `afterID` (every device by
    /// default). A device's id and name never change once stored, and no device row is deleted,
    /// so a caller can keep the names and read only the new ones.
    package func deviceNames(afterID: Int64 = 0) throws(StoreError) -> [Int64: String] {
        try names(try connection.cached("SELECT id, name FROM devices WHERE id > ?"), afterID: afterID)
    }

    /// App names by id, of the apps with an id greater than `afterID` (as ``deviceNames(afterID:)``).
    package func appNames(afterID: Int64 = 0) throws(StoreError) -> [Int64: String] {
        try names(try connection.cached("SELECT id, name FROM apps WHERE id > ?"), afterID: afterID)
    }

    private func names(_ s: Statement, afterID: Int64) throws(StoreError) -> [Int64: String] {
        defer { s.reset() }
        try s.bind([.integer(afterID)])
        var out: [Int64: String] = [:]
        while try s.step() { out[s.int(0)] = s.text(1) }
        return out
    }

    /// Launch counts per (device, app) from the per-file aggregates, without scanning events.
    package func launchCounts() throws(StoreError) -> [(device: Int64, app: Int64, launches: Int64)] {
        let s = try connection.prepare(
            "SELECT device_id, app_id, sum(n) FROM file_counts WHERE kind = 0 AND device_id IS NOT NULL GROUP BY device_id, app_id")
        var out: [(Int64, Int64, Int64)] = []
        while try s.step() { out.append((s.int(0), s.int(1), s.int(2))) }
        return out
    }
}
