import FetchCastTrace

/// One row of the stable `events` view, as `fetchcast export events` writes it.
public struct EventRow: Sendable, Hashable {
    /// Unix seconds, UTC (floor of ``timeMicros``).
    public var timeUTC: Int64
    /// The device's UTC offset at that instant, seconds.
    public var utcOffsetSeconds: Int64
    /// The device name (`""` for a publish to every device).
    public var device: String
    /// The app name.
    public var app: String
    /// `launch`, `fetch`, `publish` or `state`.
    public var event: String
    /// `newData`, `noData`, `failed` or `nil`.
    public var result: String?
    /// Bytes, when known.
    public var bytes: Int64?
    /// Duration in milliseconds, when known.
    public var durationMs: Int64?
    /// The exact instant in microseconds since the Unix epoch.
    public var timeMicros: Int64
    /// The file the event came from (`fetchcast files`).
    public var fileID: Int64
    /// The line of that file.
    public var line: Int64
    /// `wifi`, `cellular`, `offline` or `nil` (set only by `state` rows).
    public var network: String?
    /// `charging`, `battery` or `nil` (set only by `state` rows).
    public var power: String?
    /// The battery level in percent, or `nil` (set only by `state` rows).
    public var battery: Int64?
    /// `on`, `off` or `nil` (set only by `state` rows).
    public var lowPower: String?
}

/// Which rows of the `events` view to read.
public struct EventFilter: Sendable, Hashable {
    /// Only this device (`""` selects publishes to every device); every device when `nil`.
    public var device: String?
    /// Only this app; every app when `nil`.
    public var app: String?
    /// Only events at or after this instant, microseconds since the Unix epoch.
    public var fromMicros: Int64?
    /// Only events strictly before this instant, microseconds since the Unix epoch.
    public var toMicros: Int64?

    /// Creates a filter; every argument left out selects everything.
    public init(device: String? = nil, app: String? = nil, fromMicros: Int64? = nil, toMicros: Int64? = nil) {
        self.device = device
        self.app = app
        self.fromMicros = fromMicros
        self.toMicros = toMicros
    }
}

extension Store {
    /// The column names of the `events` view, in order.
    public static let eventColumns = [
        "time_utc", "utc_offset_s", "device", "app", "event", "result", "bytes", "duration_ms", "time_us", "file_id", "line",
        "network", "power", "battery", "low_power",
    ]

    /// How many of ``eventColumns`` are the condition columns (the last ones).
    public static let conditionColumnCount = 4

    /// Whether the store holds any `state` row (read from the per-file aggregates).
    public func hasStateRows() throws(StoreError) -> Bool {
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
    public func scanEventRows(_ filter: EventFilter, _ body: (EventRow) throws -> Void) throws {
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
