/// One trace event with its names spelled out: the form an embedding app or a test works with.
public struct TraceEvent: Sendable, Hashable, Codable {
    /// The instant, in microseconds since the Unix epoch (UTC).
    public var timeMicros: Int64
    /// The device's offset from UTC at that instant, in seconds.
    public var utcOffsetSeconds: Int32
    /// The device id; empty only for a `publish` that applies to every device.
    public var device: String
    /// The app id; empty for a `state` row.
    public var app: String
    /// What happened.
    public var kind: EventKind
    /// The fetch outcome (fetches only).
    public var result: FetchResult?
    /// Bytes transferred, when known.
    public var bytes: Int64?
    /// Duration in milliseconds, when known.
    public var durationMs: Int64?
    /// The network a `state` row sets.
    public var network: NetworkCondition?
    /// The power source a `state` row sets.
    public var power: PowerCondition?
    /// The battery level (percent) a `state` row sets.
    public var battery: UInt8?
    /// Whether Low Power Mode is on, when a `state` row sets it.
    public var lowPower: Bool?

    /// Creates an event.
    public init(
        timeMicros: Int64, utcOffsetSeconds: Int32 = 0, device: String, app: String,
        kind: EventKind, result: FetchResult? = nil, bytes: Int64? = nil, durationMs: Int64? = nil,
        conditions: ConditionChange = ConditionChange()
    ) {
        self.timeMicros = timeMicros
        self.utcOffsetSeconds = utcOffsetSeconds
        self.device = device
        self.app = app
        self.kind = kind
        self.result = result
        self.bytes = bytes
        self.durationMs = durationMs
        self.network = conditions.network
        self.power = conditions.power
        self.battery = conditions.battery
        self.lowPower = conditions.lowPower
    }

    /// What a `state` row sets (empty for every other kind).
    public var conditions: ConditionChange {
        ConditionChange(network: network, power: power, battery: battery, lowPower: lowPower)
    }

    /// The instant in (fractional) Unix seconds.
    public var time: Double { Double(timeMicros) / 1_000_000 }
}

extension TraceEvent {
    /// Spells out an encoded event's names from the table that interned them.
    package init(_ event: EncodedEvent, symbols: SymbolTable) {
        self.init(
            timeMicros: event.timeMicros, utcOffsetSeconds: event.utcOffsetSeconds,
            device: event.device == EncodedEvent.everyDevice ? "" : symbols.name(event.device),
            app: symbols.name(event.app), kind: event.kind, result: event.result,
            bytes: event.bytes, durationMs: event.durationMs, conditions: event.conditions)
    }
}
