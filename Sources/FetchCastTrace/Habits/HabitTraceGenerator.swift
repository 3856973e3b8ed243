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
/// - Complexity: O(launches log launches) time. Streamed a day at a time: every device's
///   launches fall inside their local day and all devices share one UTC offset, so a day's rows
///   are sorted and written before the next day is drawn; memory holds one day's launches of
///   every device (24 bytes each) and each device's generator, whatever the number of days.
public enum HabitTraceGenerator {
    /// What the generator wrote.
    public struct Summary: Sendable, Hashable {
        /// Devices generated.
        public var devices: Int
        /// `launch` rows written.
        public var launches: Int
    }

    /// One launch, compactly: its instant, device and app by number, and duration.
    private struct Row {
        var micros: Int64
        var device: Int32
        var app: Int32
        var durationMs: Int32
    }

    /// A device's simulator, light or heavy.
    private enum Simulator {
        case light(LightUserSimulator)
        case heavy(HeavyUserSimulator)

        mutating func launches(day d: Int) -> [HabitLaunch] {
            switch self {
            case .light(var s):
                let out = s.launches(day: d)
                self = .light(s)
                return out
            case .heavy(var s):
                let out = s.launches(day: d)
                self = .heavy(s)
                return out
            }
        }
    }

    /// Generates the trace and writes it to `output`, a day at a time.
    ///
    /// - Parameters:
    ///   - options: The archetypes, the span and the seed; checked with ``HabitOptions/problem``.
    ///   - output: Where the CSV goes (a ``GzipSink`` or ``FileSink``).
    ///   - progress: Told the days written so far and the total, after each day (its rows are
    ///     in `output` by then).
    /// - Returns: Counts of what was written.
    /// - Throws: ``HabitOptionsError`` when the options have a problem (nothing is written).
    public static func generate<Out: TextOutputStream>(
        options: HabitOptions, to output: inout Out, progress: ((_ days: Int, _ of: Int) -> Void)? = nil
    ) throws(HabitOptionsError) -> Summary {
        if let problem = options.problem { throw HabitOptionsError(message: problem) }
        var ids: [String] = []
        var simulators: [Simulator] = []
        for archetype in options.archetypes {
            for number in 1...options.devicesPerArchetype {
                let id = "\(archetype.rawValue)-\(number)"
                ids.append(CSVField.escape(id))
                let rng = SplitMix64(seed: options.seed ^ ConditionOverlay.stableHash(id))
                simulators.append(archetype.isHeavy
                    ? .heavy(HeavyUserSimulator(options: options, regularPickup: archetype == .heavyEarly, rng: rng))
                    : .light(LightUserSimulator(archetype: archetype, options: options, device: number, rng: rng)))
            }
        }
        var apps: [String] = []
        var appNumbers: [String: Int32] = [:]
        func text(_ r: Row) -> String {
            Timestamp.format(micros: r.micros, utcOffsetSeconds: options.utcOffsetSeconds) + "," + ids[Int(r.device)] + "," + apps[Int(r.app)]
                + ",launch,,," + String(r.durationMs) + "\n"
        }
        output.write(TraceColumn.header + "\n")
        var written = 0
        var rows: [Row] = []
        for d in 0..<options.days {
            rows.removeAll(keepingCapacity: true)
            for device in simulators.indices {
                for l in simulators[device].launches(day: d) {
                    let micros = (Int64(l.day) * 86_400 + Int64(l.second) - Int64(options.utcOffsetSeconds)) * 1_000_000
                    let app: Int32
                    if let known = appNumbers[l.app] {
                        app = known
                    } else {
                        app = Int32(apps.count)
                        appNumbers[l.app] = app
                        apps.append(CSVField.escape(l.app))
                    }
                    rows.append(Row(micros: micros, device: Int32(device), app: app, durationMs: Int32(clamping: l.durationMs)))
                }
            }
            // By time, then by the row's text: rows of one instant are formatted to be ordered.
            rows.sort { $0.micros < $1.micros }
            var i = 0
            while i < rows.count {
                var j = i + 1
                while j < rows.count && rows[j].micros == rows[i].micros { j += 1 }
                if j == i + 1 {
                    output.write(text(rows[i]))
                } else {
                    for line in rows[i..<j].map(text).sorted() { output.write(line) }
                }
                i = j
            }
            written += rows.count
            progress?(d + 1, options.days)
        }
        return Summary(devices: ids.count, launches: written)
    }
}
