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
/// - Complexity: O(launches log launches) time. The launches are held in memory, 24 bytes each
///   (a heavy user over the default 42 days is about 4 200), and their rows are formatted as
///   they are written; a request for more than ``maxLaunches`` is refused before any is made.
public enum HabitTraceGenerator {
    /// What the generator wrote.
    public struct Summary: Sendable, Hashable {
        /// Devices generated.
        public var devices: Int
        /// `launch` rows written.
        public var launches: Int
    }

    /// The most launches one trace may hold (about 2.4 GB of memory while it is sorted).
    public static let maxLaunches = 100_000_000

    /// Launches a device of `archetype` makes a day at most on average, for the bound: a heavy
    /// user's mean, and for light users their habits, re-opens and noise apps.
    static func expectedLaunchesPerDay(_ archetype: HabitArchetype, options: HabitOptions) -> Double {
        archetype.isHeavy ? options.heavyLaunchesPerDay + (archetype == .heavyEarly ? 3 : 0) : 4 + Double(options.noiseApps) + Double(archetype.anytimeLaunches?.perDay ?? 0)
    }

    /// The problem with generating `options` in memory, or `nil`: more launches than
    /// ``maxLaunches`` expected.
    public static func sizeProblem(_ options: HabitOptions) -> String? {
        let perDay = options.archetypes.reduce(0.0) { $0 + expectedLaunchesPerDay($1, options: options) }
        let expected = perDay * Double(options.devicesPerArchetype) * Double(options.days)
        guard expected > Double(maxLaunches) else { return nil }
        return "about \(Int(expected)) launches were asked for (\(options.archetypes.count) archetypes × --devices-per-archetype \(options.devicesPerArchetype) × --days \(options.days)); "
            + "one trace holds at most \(maxLaunches), which are sorted in memory: ask for fewer devices or days, or generate several traces with other --seed values"
    }

    /// One launch, compactly: its instant, device and app by number, and duration.
    private struct Row {
        var micros: Int64
        var device: Int32
        var app: Int32
        var durationMs: Int32
    }

    /// Generates the trace and writes it to `output`.
    ///
    /// - Parameters:
    ///   - options: The archetypes, the span and the seed; checked with ``HabitOptions/problem``
    ///     and ``sizeProblem(_:)``.
    ///   - output: Where the CSV goes (a ``GzipSink`` or ``FileSink``).
    ///   - progress: Told the devices generated so far and the total, after each device.
    /// - Returns: Counts of what was written.
    /// - Throws: ``HabitOptionsError`` when the options have a problem (nothing is written).
    public static func generate<Out: TextOutputStream>(
        options: HabitOptions, to output: inout Out, progress: ((_ devices: Int, _ of: Int) -> Void)? = nil
    ) throws(HabitOptionsError) -> Summary {
        if let problem = options.problem ?? sizeProblem(options) { throw HabitOptionsError(message: problem) }
        var rows: [Row] = []
        var ids: [String] = []
        var apps: [String] = []
        var appNumbers: [String: Int32] = [:]
        let total = options.archetypes.count * options.devicesPerArchetype
        for archetype in options.archetypes {
            for number in 1...options.devicesPerArchetype {
                let id = "\(archetype.rawValue)-\(number)"
                let device = Int32(ids.count)
                ids.append(CSVField.escape(id))
                var rng = SplitMix64(seed: options.seed ^ ConditionOverlay.stableHash(id))
                let launches = archetype.isHeavy
                    ? HeavyUserSimulator(options: options, regularPickup: archetype == .heavyEarly).launches(rng: &rng)
                    : LightUserSimulator(archetype: archetype, options: options, device: number).launches(rng: &rng)
                guard rows.count + launches.count <= maxLaunches else {
                    throw HabitOptionsError(message: "more than \(maxLaunches) launches were made by device \(id); ask for fewer devices or days")
                }
                for l in launches {
                    let micros = (Int64(l.day) * 86_400 + Int64(l.second) - Int64(options.utcOffsetSeconds)) * 1_000_000
                    let app: Int32
                    if let known = appNumbers[l.app] {
                        app = known
                    } else {
                        app = Int32(apps.count)
                        appNumbers[l.app] = app
                        apps.append(CSVField.escape(l.app))
                    }
                    rows.append(Row(micros: micros, device: device, app: app, durationMs: Int32(clamping: l.durationMs)))
                }
                progress?(ids.count, total)
            }
        }
        func text(_ r: Row) -> String {
            Timestamp.format(micros: r.micros, utcOffsetSeconds: options.utcOffsetSeconds) + "," + ids[Int(r.device)] + "," + apps[Int(r.app)]
                + ",launch,,," + String(r.durationMs) + "\n"
        }
        // By time, then by the row's text: rows of one instant are formatted to be ordered.
        rows.sort { $0.micros < $1.micros }
        output.write(TraceColumn.header + "\n")
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
        return Summary(devices: ids.count, launches: rows.count)
    }
}
