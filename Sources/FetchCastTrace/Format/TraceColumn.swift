/// The columns (CSV) or keys (JSON Lines) of the trace format.
public enum TraceColumn: Int, Sendable, CaseIterable {
    case time, device, app, event, result, bytes, durationMs
    /// The device conditions only a `state` row may fill.
    case network, power, battery, lowPower

    /// The name in a header or as a JSON key.
    public var name: String {
        switch self {
        case .time: "time"
        case .device: "device"
        case .app: "app"
        case .event: "event"
        case .result: "result"
        case .bytes: "bytes"
        case .durationMs: "duration_ms"
        case .network: "network"
        case .power: "power"
        case .battery: "battery"
        case .lowPower: "low_power"
        }
    }

    /// Whether every row must have the column.
    public var isRequired: Bool { rawValue <= TraceColumn.event.rawValue }

    /// The column a header name or JSON key stands for.
    public init?(name: some Collection<UInt8>) {
        guard let match = TraceColumn.allCases.first(where: { $0.name.utf8.elementsEqual(name) }) else { return nil }
        self = match
    }

    /// Whether only a `state` row may fill the column.
    public var isCondition: Bool { rawValue >= TraceColumn.network.rawValue }

    /// The columns in the order the canonical header lists them (without the condition
    /// columns, which a trace without `state` rows does not need).
    public static let header = "time,device,app,event,result,bytes,duration_ms"

    /// The canonical header with the condition columns.
    public static let headerWithConditions = header + ",network,power,battery,low_power"
}

/// The text form of a trace.
public enum TraceFormat: String, Sendable, Hashable, Codable {
    /// RFC 4180 CSV with a header line.
    case csv
    /// One flat JSON object per line.
    case jsonLines = "jsonl"
}

/// Choices that change how a trace's values are read.
public struct TraceOptions: Sendable, Hashable {
    /// The UTC offset, in seconds, of timestamps given as Unix seconds (default 0, UTC).
    public var defaultUTCOffsetSeconds: Int32
    /// The longest line accepted, in bytes (default 1 MiB).
    public var maxLineBytes: Int
    /// The most bytes read after gzip decompression (`nil`: no limit), blank lines included:
    /// a few megabytes of gzip can hold gigabytes.
    public var maxDecodedBytes: Int64?
    /// The most rows (events, valid or not, and blank lines) read after the header (`nil`: no
    /// limit).
    public var maxEvents: Int64?

    /// Creates options.
    public init(defaultUTCOffsetSeconds: Int32 = 0, maxLineBytes: Int = 1 << 20, maxDecodedBytes: Int64? = nil, maxEvents: Int64? = nil) {
        self.defaultUTCOffsetSeconds = defaultUTCOffsetSeconds
        self.maxLineBytes = maxLineBytes
        self.maxDecodedBytes = maxDecodedBytes
        self.maxEvents = maxEvents
    }
}

/// Limits every reader of ids shares: the trace formats and the HTTP API.
public enum TraceLimits {
    /// The longest device or app id, in UTF-8 bytes: one limit for ingest and for the API, so
    /// that every stored id can be asked for.
    public static let maxIDBytes = 10_240
}
