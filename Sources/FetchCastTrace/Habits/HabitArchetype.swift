/// A kind of regular user that ``HabitTraceGenerator`` simulates: which app they open and when.
///
/// Each archetype is a list of *habit windows* per day (an app at a local time of day, with a
/// jitter and a presence), except ``heavy``, a heavy user with bursty sessions over ~15 apps
/// (``HeavyUserSimulator``). Light users also open ``HabitOptions/noiseApps`` other apps at
/// random times. The raw value is the name on the command line and the prefix of the device id
/// (`morning-reader-1`).
public enum HabitArchetype: String, CaseIterable, Sendable, Hashable, Codable {
    /// `news` at about 07:50 every day, weekends too.
    case morningReader = "morning-reader"
    /// Weekdays only: `news` (or `podcast`, chosen per device) at about 07:40, again at about 17:50.
    case commuter
    /// Alternating weeks: early weeks `news` at about 05:30 and `chat` at 14:30; late weeks
    /// `news` at about 13:30 and `chat` at 22:30 (even-numbered devices start with a late week).
    case shiftWorker = "shift-worker"
    /// `news` at about 07:00 on weekdays and about 09:30 on weekends.
    case weekendReader = "weekend-reader"
    /// `news` (or `mail`, per device) at about 21:00 on 70% of days, ±45 minutes (its own jitter
    /// and presence, whatever the options say).
    case eveningReader = "evening-reader"
    /// About ``HabitOptions/heavyLaunchesPerDay`` launches a day over 15 apps, in bursty
    /// sessions during waking hours (like the heaviest users of real traces).
    case heavy
    /// The simplest case, to check by hand: `news` at exactly 08:00:00, `chat` at 12:30:00 and
    /// 21:10:00 every day; no jitter, no absences, no re-opens, no noise, 60 s per launch. Not
    /// in the default set.
    case daily0800 = "daily-0800"
    /// A habit on some weekdays only: `fitness` at about 06:15 on Mondays, Wednesdays and
    /// Fridays, never on the other days. Not in the default set.
    case gymMWF = "gym-mwf"
    /// A daily user without a habit: `mail` opened 3 times a day at uniform times from 08:00 to
    /// 22:00 (each launch its own time, every day). Not in the default set.
    case anytimeMail = "anytime-mail"
    /// A heavy user whose first pickup is regular: ``heavy``'s day, but up at about 06:45 on
    /// weekdays and 09:00 at weekends (± a normal 10 minutes), the first session at waking
    /// (`chat`, then `news` on 80% of days, then `weather` on 50%) before the day's bursts.
    /// Not in the default set.
    case heavyEarly = "heavy-early"

    /// The archetypes generated when none are named: all but the ones kept for a question of
    /// their own (``daily0800``, ``gymMWF``, ``anytimeMail``, ``heavyEarly``), so that the
    /// default trace stays the one the docs measured.
    public static let defaultSet: [HabitArchetype] = [.morningReader, .commuter, .shiftWorker, .weekendReader, .eveningReader, .heavy]

    /// Whether the archetype's launches are exact (no randomness at all).
    var isExact: Bool { self == .daily0800 }

    /// Whether the archetype is simulated by ``HeavyUserSimulator``.
    var isHeavy: Bool { self == .heavy || self == .heavyEarly }

    /// Launches at uniform times each day, whatever the habit windows: the app, how many a
    /// day, and the span of the day (seconds after local midnight).
    var anytimeLaunches: (app: String, perDay: Int, from: Double, to: Double)? {
        self == .anytimeMail ? ("mail", 3, 8 * 3600, 22 * 3600) : nil
    }

    /// The archetype's habit windows on a day.
    ///
    /// - Parameters:
    ///   - weekday: Monday = 0 … Sunday = 6.
    ///   - week: Weeks since the generated span began (0 for the first).
    ///   - device: The device's number within its archetype (1, 2, …).
    ///   - variant: The device's choice between alternative apps (0 or 1, drawn once per device).
    /// - Returns: The windows, in time order; empty for ``heavy``, ``heavyEarly`` and ``anytimeMail``.
    func windows(weekday: Int, week: Int, device: Int, variant: Int) -> [HabitWindow] {
        let weekend = weekday >= 5
        switch self {
        case .morningReader:
            return [HabitWindow(app: "news", minute: 7 * 60 + 50)]
        case .commuter:
            if weekend { return [] }
            let app = variant == 0 ? "news" : "podcast"
            return [HabitWindow(app: app, minute: 7 * 60 + 40), HabitWindow(app: app, minute: 17 * 60 + 50)]
        case .shiftWorker:
            let early = (week + device + 1) % 2 == 0
            return early
                ? [HabitWindow(app: "news", minute: 5 * 60 + 30), HabitWindow(app: "chat", minute: 14 * 60 + 30)]
                : [HabitWindow(app: "news", minute: 13 * 60 + 30), HabitWindow(app: "chat", minute: 22 * 60 + 30)]
        case .weekendReader:
            return [HabitWindow(app: "news", minute: weekend ? 9 * 60 + 30 : 7 * 60)]
        case .eveningReader:
            return [HabitWindow(app: variant == 0 ? "news" : "mail", minute: 21 * 60, jitterMinutes: 45, presence: 0.7)]
        case .heavy, .heavyEarly, .anytimeMail:
            return []
        case .gymMWF:
            return [0, 2, 4].contains(weekday) ? [HabitWindow(app: "fitness", minute: 6 * 60 + 15)] : []
        case .daily0800:
            return [
                HabitWindow(app: "news", minute: 8 * 60), HabitWindow(app: "chat", minute: 12 * 60 + 30),
                HabitWindow(app: "chat", minute: 21 * 60 + 10),
            ]
        }
    }
}

/// One habit: an app opened at about a local time of day on the days it happens.
struct HabitWindow: Sendable, Hashable {
    /// The app opened.
    var app: String
    /// The usual local time, minutes after midnight.
    var minute: Int
    /// The standard deviation of the time in minutes; `nil` takes ``HabitOptions/jitterMinutes``.
    var jitterMinutes: Double?
    /// The share of days the habit happens; `nil` takes ``HabitOptions/presence``.
    var presence: Double?
}
