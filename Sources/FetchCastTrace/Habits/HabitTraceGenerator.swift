import FetchCastCore
/// Generates a seeded launch trace of regular users: each ``HabitArchetype`` as one or more
/// devices over ``HabitOptions/days`` days, for evaluating whether a scheduler anticipates habits.
///
/// Device ids are the archetype's name and a number (`commuter-1`). Each device draws from its
/// own generator, seeded from the seed and its id, so a device's launches do not depend on which
/// other archetypes or how many devices are generated. Times are whole seconds in the options'
/// UTC offset. The output is CSV with the canonical header (`time,device,app,event,result,bytes,
/// duration_ms`), one `launch` row per launch with its `duration_ms`, sorted by time and then
/// by the row's text; the same seed and options give byte-identical output.
///
/// - Complexity: O(launches log launches) time; the launches are held in memory (a heavy user
///   over the default 42 days is about 4 200).
public enum HabitTraceGenerator {
    /// What the generator wrote.
    public struct Summary: Sendable, Hashable {
        /// Devices generated.
        public var devices: Int
        /// `launch` rows written.
        public var launches: Int
    }

    /// Generates the trace and writes it to `output`.
    ///
    /// - Parameters:
    ///   - options: The archetypes, the span and the seed; checked with ``HabitOptions/problem``.
    ///   - output: Where the CSV goes (a ``GzipSink`` or ``FileSink``).
    /// - Returns: Counts of what was written.
    /// - Throws: ``HabitOptionsError`` when the options have a problem (nothing is written).
    public static func generate<Out: TextOutputStream>(options: HabitOptions, to output: inout Out) throws(HabitOptionsError) -> Summary {
        if let problem = options.problem { throw HabitOptionsError(message: problem) }
        var rows: [(time: Int64, text: String)] = []
        var devices = 0
        for archetype in options.archetypes {
            for number in 1...options.devicesPerArchetype {
                let id = "\(archetype.rawValue)-\(number)"
                devices += 1
                var rng = SplitMix64(seed: options.seed ^ ConditionOverlay.stableHash(id))
                let launches = archetype == .heavy
                    ? HeavyUserSimulator(options: options).launches(rng: &rng)
                    : LightUserSimulator(archetype: archetype, options: options, device: number).launches(rng: &rng)
                for l in launches {
                    let micros = (Int64(l.day) * 86_400 + Int64(l.second) - Int64(options.utcOffsetSeconds)) * 1_000_000
                    let time = Timestamp.format(micros: micros, utcOffsetSeconds: options.utcOffsetSeconds)
                    rows.append((micros, CSVField.line([time, id, l.app, "launch", "", "", String(l.durationMs)])))
                }
            }
        }
        rows.sort { $0.time != $1.time ? $0.time < $1.time : $0.text < $1.text }
        output.write(TraceColumn.header + "\n")
        for r in rows { output.write(r.text) }
        return Summary(devices: devices, launches: rows.count)
    }
}
