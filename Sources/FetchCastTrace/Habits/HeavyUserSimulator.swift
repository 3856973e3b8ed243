import FetchCastCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Simulates a heavy user: bursty sessions over 15 apps during waking hours.
///
/// Per day: wakes at 07:00 and sleeps at 23:30 (each ± a normal 30 minutes); opens a Poisson
/// number of sessions with mean ``HabitOptions/heavyLaunchesPerDay`` / 4 at uniform times in
/// between; a session is 1 + geometric (mean 3) launches, each app drawn by Zipf weights
/// (1/rank: `chat` most, `games` least), the next launch 5–60 s after the previous one closed,
/// each open a log-normal median 40 s (10 s–30 min); a session ends at midnight. So about `heavyLaunchesPerDay` launches.
/// With ``regularPickup`` the day starts at a regular time with ``morningRoutine`` first.
struct HeavyUserSimulator {
    let options: HabitOptions
    /// A regular first pickup (``HabitArchetype/heavyEarly``): up at 06:45 on weekdays and
    /// 09:00 at weekends (± a normal 10 minutes), the day's first session at waking.
    let regularPickup: Bool
    /// The device's generator.
    private var rng: SplitMix64
    /// Cumulative Zipf weights over ``apps``.
    private let cumulative: [Double]

    /// The first session of a ``regularPickup`` day: each app with its chance, in this order.
    static let morningRoutine: [(app: String, chance: Double)] = [("chat", 1), ("news", 0.8), ("weather", 0.5)]

    /// The apps by rank (Zipf weights 1/rank).
    static let apps = [
        "chat", "social", "browser", "mail", "video", "music", "news", "maps", "photos", "camera",
        "messages", "calendar", "weather", "shop", "games",
    ]

    /// A device's simulator, drawing from `rng` day after day (``launches(day:)``).
    init(options: HabitOptions, regularPickup: Bool = false, rng: SplitMix64) {
        self.options = options
        self.regularPickup = regularPickup
        self.rng = rng
        var cumulative: [Double] = []
        var total = 0.0
        for rank in 1...Self.apps.count {
            total += 1 / Double(rank)
            cumulative.append(total)
        }
        self.cumulative = cumulative
    }

    /// A foreground time: log-normal with median 40 s, clamped to 10 s–30 min, in milliseconds.
    static func duration(_ rng: inout SplitMix64) -> Int {
        Int(min(max(40_000 * exp(1.0 * rng.normal()), 10_000), 1_800_000))
    }

    /// The device's launches on day `d` of the span (0 for the first), all inside that day;
    /// call for each day in order.
    /// - Complexity: O(heavyLaunchesPerDay).
    mutating func launches(day d: Int) -> [HabitLaunch] {
        var out: [HabitLaunch] = []
        let day = options.startDay + d
        let wake: Double
        if regularPickup {
            let weekend = CivilDate.weekday(days: day) >= 5
            wake = (weekend ? 9 * 3600 : 6.75 * 3600) + rng.normal() * 600
            var t = wake
            for step in Self.morningRoutine {
                let opened = rng.chance(step.chance)
                let duration = Self.duration(&rng)
                let pause = rng.uniform(5, 60)
                guard opened else { continue }
                out.append(HabitLaunch(day: day, second: LightUserSimulator.clamp(t), app: step.app, durationMs: duration))
                t += Double(duration) / 1000 + pause
            }
        } else {
            wake = 7 * 3600 + rng.normal() * 1800
        }
        let sleep = 23.5 * 3600 + rng.normal() * 1800
        let sessions = rng.poisson(mean: options.heavyLaunchesPerDay / 4)
        for _ in 0..<sessions {
            var t = rng.uniform(wake, sleep)
            let count = 1 + rng.geometric(mean: 3)
            for _ in 0..<count where t < 86_400 {
                let app = Self.apps[rng.pick(cumulative: cumulative)]
                let duration = Self.duration(&rng)
                let second = LightUserSimulator.clamp(t)
                out.append(HabitLaunch(day: day, second: second, app: app, durationMs: duration))
                t += Double(duration) / 1000 + rng.uniform(5, 60)
            }
        }
        return out
    }
}
