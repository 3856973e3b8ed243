import FetchCastCore
import FetchCastTrace

/// One row of the stable `events` view, as `fetchcast export events` writes it.
package struct EventRow: Sendable, Hashable {
    /// Unix seconds, UTC (floor of ``timeMicros``).
    package var timeUTC: Int64
    /// The device's UTC offset at that instant, seconds.
    package var utcOffsetSeconds: Int64
    /// The device name (`""` for a publish to every device).
    package var device: String
    /// The app name.
    package var app: String
    /// `launch`, `fetch`, `publish` or `state`.
    package var event: String
    /// `newData`, `noData`, `failed` or `nil`.
    package var result: String?
    /// Bytes, when known.
    package var bytes: Int64?
    /// Duration in milliseconds, when known.
    package var durationMs: Int64?
    /// The exact instant in microseconds since the Unix epoch.
    package var timeMicros: Int64
    /// The file the event came from (`fetchcast files`).
    package var fileID: Int64
    /// The line of that file.
    package var line: Int64
    /// `wifi`, `cellular`, `offline` or `nil` (set only by `state` rows).
    package var network: String?
    /// `charging`, `battery` or `nil` (set only by `state` rows).
    package var power: String?
    /// The battery level in percent, or `nil` (set only by `state` rows).
    package var battery: Int64?
    /// `on`, `off` or `nil` (set only by `state` rows).
    package var lowPower: String?

    /// Creates a row (an engine reading its `events` view).
    package init(
        timeUTC: Int64, utcOffsetSeconds: Int64, device: String, app: String, event: String, result: String?, bytes: Int64?,
        durationMs: Int64?, timeMicros: Int64, fileID: Int64, line: Int64, network: String?, power: String?, battery: Int64?,
        lowPower: String?
    ) {
        self.timeUTC = timeUTC
        self.utcOffsetSeconds = utcOffsetSeconds
        self.device = device
        self.app = app
        self.event = event
        self.result = result
        self.bytes = bytes
        self.durationMs = durationMs
        self.timeMicros = timeMicros
        self.fileID = fileID
        self.line = line
        self.network = network
        self.power = power
        self.battery = battery
        self.lowPower = lowPower
    }
}

/// Which rows of the `events` view to read.
package struct EventFilter: Sendable, Hashable {
    /// Only this device (`""` selects publishes to every device); every device when `nil`.
    package var device: String?
    /// Only this app; every app when `nil`.
    package var app: String?
    /// Only events at or after this instant, microseconds since the Unix epoch.
    package var fromMicros: Int64?
    /// Only events strictly before this instant, microseconds since the Unix epoch.
    package var toMicros: Int64?

    /// Creates a filter; every argument left out selects everything.
    package init(device: String? = nil, app: String? = nil, fromMicros: Int64? = nil, toMicros: Int64? = nil) {
        self.device = device
        self.app = app
        self.fromMicros = fromMicros
        self.toMicros = toMicros
    }
}

extension Store {
    /// The column names of the `events` view, in order.
    package static let eventColumns = [
        "time_utc", "utc_offset_s", "device", "app", "event", "result", "bytes", "duration_ms", "time_us", "file_id", "line",
        "network", "power", "battery", "low_power",
    ]

    /// How many of ``eventColumns`` are the condition columns (the last ones).
    package static let conditionColumnCount = 4

    /// Whether the store holds any `state` row (read from the per-file aggregates).
    package func hasStateRows() throws(StoreError) -> Bool {
        try connection.scalarInt("SELECT EXISTS(SELECT 1 FROM file_counts WHERE kind = \(EventKind.state.rawValue))") != 0
    }

    /// Calls `body` for each row of the `events` view that passes `filter`, in time order
    /// (ties by file and line, so the order is deterministic).
    ///
    /// - Parameters:
    ///   - filter: Device, app and time range to keep.
    ///   - body: Called once per row; an error it throws stops the scan and is rethrown.
    /// - Throws: ``StoreError`` on an SQLite failure, or what `body` throws.
    /// - Complexity: O(n log n) in the events of the store (a sort by time), streaming rows.
    package func scanEventRows(_ filter: EventFilter, _ body: (EventRow) throws -> Void) throws {
        var conditions: [String] = []
        var arguments: [SQLValue] = []
        if let device = filter.device {
            conditions.append("device = ?")
            arguments.append(.text(device))
        }
        if let app = filter.app {
            conditions.append("app = ?")
            arguments.append(.text(app))
        }
        if let from = filter.fromMicros {
            conditions.append("time_us >= ?")
            arguments.append(.integer(from))
        }
        if let to = filter.toMicros {
            conditions.append("time_us < ?")
            arguments.append(.integer(to))
        }
        let whereClause = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let s = try connection.prepare(
            "SELECT \(Self.eventColumns.joined(separator: ", ")) FROM events\(whereClause) ORDER BY time_us, file_id, line")
        if !arguments.isEmpty { try s.bind(arguments) }
        while try s.step() {
            try body(EventRow(
                timeUTC: s.int(0), utcOffsetSeconds: s.int(1), device: s.text(2), app: s.text(3), event: s.text(4),
                result: s.optionalText(5), bytes: s.optionalInt(6), durationMs: s.optionalInt(7), timeMicros: s.int(8),
                fileID: s.int(9), line: s.int(10), network: s.optionalText(11), power: s.optionalText(12),
                battery: s.optionalInt(13), lowPower: s.optionalText(14)))
        }
    }
}
