/// One trace event with its device and app interned as small integers.
///
/// This is the form the parser produces on the hot path: no strings are allocated per row.
/// Names are looked up in the ``SymbolTable`` the reader was given.
package struct EncodedEvent: Sendable, Hashable {
    /// The instant, in microseconds since the Unix epoch (UTC).
    package var timeMicros: Int64
    /// The device's offset from UTC at that instant, in seconds (east positive).
    package var utcOffsetSeconds: Int32
    /// The device's symbol, or ``EncodedEvent/everyDevice`` for a `publish` with an empty device.
    package var device: Int32
    /// The app's symbol (the empty name's for a `state` row).
    package var app: Int32
    /// What happened.
    package var kind: EventKind
    /// The fetch outcome; set exactly when `kind == .fetch`.
    package var result: FetchResult?
    /// Bytes transferred, when the trace says.
    package var bytes: Int64?
    /// What a `state` row sets (empty for every other kind). Declared here, after ``bytes``,
    /// so that its five bytes sit in padding and the event stays 64 bytes.
    package var conditions: ConditionChange
    /// Duration in milliseconds, when the trace says.
    package var durationMs: Int64?
    /// The 1-based line of the input where the row starts.
    package var line: Int64

    /// The device symbol of a `publish` event that applies to every device.
    package static let everyDevice: Int32 = -1

    /// Creates an event.
    package init(
        timeMicros: Int64, utcOffsetSeconds: Int32, device: Int32, app: Int32, kind: EventKind,
        result: FetchResult? = nil, bytes: Int64? = nil, durationMs: Int64? = nil, line: Int64 = 0,
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
        self.line = line
        self.conditions = conditions
    }

    /// The instant in (fractional) Unix seconds.
    package var time: Double { Double(timeMicros) / 1_000_000 }
}
