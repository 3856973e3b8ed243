import FetchCastCore
/// Overlays a plausible, seeded layer of device conditions (`state` rows: network, power,
/// battery, Low Power Mode) on a launch trace that has none — no public launch trace we know
/// of records them.
///
/// Per device, the overnight window (charging, home Wi-Fi) is where its launches are fewest
/// over the day; evenings before it are mostly home Wi-Fi; days are cellular with Wi-Fi and
/// offline spells; the battery drains with time and launches and charges back
/// (``DeviceConditionSimulator`` has the model, ``OverlayOptions`` every parameter). Each
/// device draws from its own generator, seeded from the seed and its id, so a device's layer
/// does not depend on the other devices in the file.
///
/// The output is the input's events, unchanged in meaning, and the new `state` rows, as CSV
/// with the condition columns, in time order (ties: input rows first, in input order). The
/// same seed, options and input give byte-identical output.
///
/// - Complexity: O(events + devices × span / step) time; the input's events are held in memory.
public enum ConditionOverlay {
    /// What the overlay wrote.
    public struct Summary: Sendable, Hashable {
        /// Events copied from the input.
        public var events: Int
        /// `state` rows added.
        public var states: Int
        /// Devices given a layer.
        public var devices: Int
    }

    /// Reads `input` and writes it with a generated condition layer to `output`.
    ///
    /// - Parameters:
    ///   - input: A trace path (`-` for standard input); any existing `state` rows are refused.
    ///   - output: Where the CSV goes (a ``GzipSink`` or ``FileSink``).
    ///   - options: The model's parameters and the seed.
    ///   - trace: How the input's values are read.
    /// - Returns: Counts of what was written.
    /// - Throws: ``TraceError`` for bad input, or an input that already has `state` rows.
    public static func overlay<Out: TextOutputStream>(
        input: String, to output: inout Out, options: OverlayOptions, trace: TraceOptions = TraceOptions()
    ) throws(TraceError) -> Summary {
        let symbols = SymbolTable()
        let reader = try TraceReader(path: input, symbols: symbols, options: trace)
        var events: [EncodedEvent] = []
        while try reader.next(into: &events) {}
        if let state = events.first(where: { $0.kind == .state }) {
            throw TraceError(file: input, line: Int(state.line), column: 1, problem: .badValue(
                column: "event", value: "state",
                expected: "a trace without state rows; the generator adds the condition layer itself"))
        }
        // Per device, in order of first appearance: its events and launches by local hour.
        var order: [Int32] = []
        var perDevice: [Int32: [(timeMicros: Int64, offset: Int32, isLaunch: Bool)]] = [:]
        var hours: [Int32: [Int]] = [:]
        for e in events where e.device != EncodedEvent.everyDevice {
            if perDevice[e.device] == nil {
                order.append(e.device)
                hours[e.device] = Array(repeating: 0, count: 24)
            }
            perDevice[e.device, default: []].append((e.timeMicros, e.utcOffsetSeconds, e.kind == .launch))
            if e.kind == .launch { hours[e.device]![LocalTime.hourOfDay(time: e.time, utcOffsetSeconds: e.utcOffsetSeconds)] += 1 }
        }
        var lines: [(time: Int64, rank: Int, text: String)] = []
        lines.reserveCapacity(events.count * 2)
        for (i, e) in events.enumerated() {
            lines.append((e.timeMicros, i, line(TraceEvent(e, symbols: symbols))))
        }
        var states = 0
        for device in order {
            var deviceEvents = perDevice[device]!
            deviceEvents.sort { $0.timeMicros < $1.timeMicros }
            var rng = SplitMix64(seed: options.seed ^ stableHash(symbols.name(device)))
            let simulator = DeviceConditionSimulator(options: options, launchesByLocalHour: hours[device]!)
            for row in simulator.rows(events: deviceEvents, rng: &rng) {
                let event = TraceEvent(
                    timeMicros: row.timeMicros, utcOffsetSeconds: row.utcOffsetSeconds, device: symbols.name(device),
                    app: "", kind: .state, conditions: row.change)
                lines.append((row.timeMicros, events.count + states, line(event)))
                states += 1
            }
        }
        lines.sort { $0.time != $1.time ? $0.time < $1.time : $0.rank < $1.rank }
        output.write(TraceColumn.headerWithConditions + "\n")
        for l in lines { output.write(l.text) }
        return Summary(events: events.count, states: states, devices: order.count)
    }

    /// One CSV row with the condition columns.
    static func line(_ e: TraceEvent) -> String {
        CSVField.line([
            Timestamp.format(micros: e.timeMicros, utcOffsetSeconds: e.utcOffsetSeconds), e.device, e.app, e.kind.name,
            e.result?.name ?? "", e.bytes.map(String.init) ?? "", e.durationMs.map(String.init) ?? "",
            e.network?.name ?? "", e.power?.name ?? "", e.battery.map(String.init) ?? "", e.conditions.lowPowerName ?? "",
        ])
    }

    /// FNV-1a of the id's UTF-8: the same on every platform and run (unlike `Hasher`).
    static func stableHash(_ s: String) -> UInt64 {
        StableHash.of(s.utf8)
    }
}
