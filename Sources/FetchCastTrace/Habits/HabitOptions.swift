import FetchCastCore
/// The parameters of ``HabitTraceGenerator``: every one is a flag of `fetchcast habits
/// generate`, and the defaults give the archetypes as ``HabitArchetype`` describes them.
public struct HabitOptions: Sendable, Hashable, Codable {
    /// The generator's seed: the same seed and options give byte-identical output.
    public var seed: UInt64 = 1
    /// The archetypes to generate, each with ``devicesPerArchetype`` devices.
    public var archetypes: [HabitArchetype] = HabitArchetype.defaultSet
    /// Devices per archetype, numbered from 1 in their ids (`commuter-1`, `commuter-2`, …).
    public var devicesPerArchetype: Int = 1
    /// The number of days generated.
    public var days: Int = 42
    /// The first day (days since 1970-01-01, local): 2024-03-04, a Monday.
    public var startDay: Int = CivilDate.days(year: 2024, month: 3, day: 4)
    /// The devices' UTC offset (seconds east of UTC), written in every timestamp.
    public var utcOffsetSeconds: Int32 = 3600
    /// The standard deviation of a habit's time of day in minutes (normal jitter).
    public var jitterMinutes: Double = 7
    /// The share of days on which a habit happens (each window drawn per day).
    public var presence: Double = 0.95
    /// How many other apps each light user opens at random waking times (08:00–22:00), each on
    /// about 3 days a week.
    public var noiseApps: Int = 2
    /// The chance that a habit launch is followed by a second launch of the same app 2–10
    /// minutes later.
    public var reopenProbability: Double = 0.1
    /// The heavy user's mean launches per day.
    public var heavyLaunchesPerDay: Double = 100

    /// The apps light users pick their noise from (disjoint from the habit apps).
    static let noisePool = ["weather", "maps", "photos", "shop", "bank", "music", "video", "games", "fitness", "calendar"]

    /// The defaults.
    public init() {}

    /// The problem with the options, as a sentence naming the flag to fix, or `nil`.
    public var problem: String? {
        if archetypes.isEmpty { return "--archetypes is empty (expected some of \(HabitArchetype.allCases.map(\.rawValue).joined(separator: ", ")))" }
        if devicesPerArchetype < 1 || devicesPerArchetype > 10_000 {
            return "--devices-per-archetype is \(devicesPerArchetype) (expected 1 to 10000)"
        }
        if days < 1 || days > 3660 { return "--days is \(days) (expected 1 to 3660)" }
        let last = CivilDate.days(year: 9999, month: 12, day: 30)
        if startDay < 1 || startDay + days - 1 > last {
            func date(_ day: Int) -> String { String(Timestamp.format(micros: Int64(day) * 86_400_000_000, utcOffsetSeconds: 0).prefix { $0 != "T" }) }
            return "--start \(date(startDay)) and --days \(days) run to \(date(startDay + days - 1)) (expected dates from 1970-01-02 to 9999-12-30)"
        }
        if !(jitterMinutes >= 0 && jitterMinutes <= 240) { return "--jitter-minutes is \(jitterMinutes) (expected 0 to 240)" }
        if !(presence >= 0 && presence <= 1) { return "--presence is \(presence) (expected a probability from 0 to 1)" }
        if noiseApps < 0 || noiseApps > Self.noisePool.count {
            return "--noise-apps is \(noiseApps) (expected 0 to \(Self.noisePool.count))"
        }
        if !(reopenProbability >= 0 && reopenProbability <= 1) {
            return "--reopen-probability is \(reopenProbability) (expected a probability from 0 to 1)"
        }
        if !(heavyLaunchesPerDay >= 0 && heavyLaunchesPerDay <= 2000) {
            return "--heavy-launches-per-day is \(heavyLaunchesPerDay) (expected 0 to 2000)"
        }
        return nil
    }

    /// Parses a comma-separated list of archetype names (`commuter,heavy`).
    /// - Returns: The archetypes in the order named (duplicates once), or the problem as a
    ///   sentence naming the unknown name and the known ones.
    public static func parseArchetypes(_ list: String) -> Result<[HabitArchetype], HabitOptionsError> {
        var out: [HabitArchetype] = []
        for part in list.split(separator: ",", omittingEmptySubsequences: false) {
            let name = String(part.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
            guard let a = HabitArchetype(rawValue: name) else {
                return .failure(HabitOptionsError(message: "unknown archetype '\(name)' in --archetypes; expected some of \(HabitArchetype.allCases.map(\.rawValue).joined(separator: ", "))"))
            }
            if !out.contains(a) { out.append(a) }
        }
        return .success(out)
    }
}

/// A flag value ``HabitOptions`` cannot take, with a sentence saying what to write instead.
public struct HabitOptionsError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The sentence (without a final period).
    public var message: String
    public var description: String { message }
}
