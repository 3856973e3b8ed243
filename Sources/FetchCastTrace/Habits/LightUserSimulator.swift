import FetchCastCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Simulates a light user: the archetype's habit windows, re-opens and noise apps, day by day.
///
/// Per day, in this order (so a seed gives one trace): each window happens with its presence,
/// at its minute plus normal jitter (clamped to the day), staying open a log-normal 30 s–10 min
/// (median 90 s), re-opened 2–10 minutes later with ``HabitOptions/reopenProbability``; then
/// an ``HabitArchetype/anytimeLaunches`` app at its uniform times; then each noise app is
/// opened once with probability 3/7 at a uniform time from 08:00 to 22:00.
/// ``HabitArchetype/daily0800`` draws nothing: exact times, 60 s each.
struct LightUserSimulator {
    let archetype: HabitArchetype
    let options: HabitOptions
    /// The device's number within its archetype (1, 2, …).
    let device: Int
    /// The device's generator: its draws come in the order the doc comment above gives.
    private var rng: SplitMix64
    /// The device's choice between alternative apps (0 or 1), drawn first.
    private let variant: Int
    /// The device's noise apps, drawn next.
    private let noise: [String]

    /// A device's simulator: draws its variant and noise apps from `rng`, then each day's
    /// launches, day after day (``launches(day:)``).
    init(archetype: HabitArchetype, options: HabitOptions, device: Int, rng: SplitMix64) {
        self.archetype = archetype
        self.options = options
        self.device = device
        var rng = rng
        let exact = archetype.isExact
        variant = exact ? 0 : Int(rng.next() % 2)
        var noise: [String] = []
        if !exact {
            var pool = HabitOptions.noisePool
            for _ in 0..<options.noiseApps { noise.append(pool.remove(at: Int(rng.next() % UInt64(pool.count)))) }
        }
        self.noise = noise
        self.rng = rng
    }

    /// The device's launches on day `d` of the span (0 for the first); call for each day in
    /// order, as the generator's draws follow one another.
    /// - Complexity: O(windows + noise apps).
    mutating func launches(day d: Int) -> [HabitLaunch] {
        var out: [HabitLaunch] = []
        let exact = archetype.isExact
        let day = options.startDay + d
        let windows = archetype.windows(weekday: CivilDate.weekday(days: day), week: d / 7, device: device, variant: variant)
        for w in windows {
            if exact {
                out.append(HabitLaunch(day: day, second: w.minute * 60, app: w.app, durationMs: 60_000))
                continue
            }
            let present = rng.chance(w.presence ?? options.presence)
            let jitter = rng.normal() * (w.jitterMinutes ?? options.jitterMinutes) * 60
            let duration = Self.duration(&rng)
            let reopen = rng.chance(options.reopenProbability)
            let reopenAfter = rng.uniform(120, 600)
            let reopenDuration = Self.duration(&rng)
            guard present else { continue }
            let second = Self.clamp(Double(w.minute * 60) + jitter)
            out.append(HabitLaunch(day: day, second: second, app: w.app, durationMs: duration))
            if reopen {
                let again = Self.clamp(Double(second) + Double(duration) / 1000 + reopenAfter)
                out.append(HabitLaunch(day: day, second: again, app: w.app, durationMs: reopenDuration))
            }
        }
        if let anytime = archetype.anytimeLaunches {
            for _ in 0..<anytime.perDay {
                let second = Self.clamp(rng.uniform(anytime.from, anytime.to))
                out.append(HabitLaunch(day: day, second: second, app: anytime.app, durationMs: Self.duration(&rng)))
            }
        }
        for app in noise {
            let happens = rng.chance(3.0 / 7)
            let second = Self.clamp(rng.uniform(8 * 3600, 22 * 3600))
            let duration = Self.duration(&rng)
            if happens { out.append(HabitLaunch(day: day, second: second, app: app, durationMs: duration)) }
        }
        return out
    }

    /// A foreground time: log-normal with median 90 s, clamped to 30 s–10 min, in milliseconds.
    static func duration(_ rng: inout SplitMix64) -> Int {
        Int(min(max(90_000 * exp(0.8 * rng.normal()), 30_000), 600_000))
    }

    /// A second of the day, rounded down and kept inside the day.
    static func clamp(_ second: Double) -> Int {
        Int(min(max(second, 0), 86_399).rounded(.down))
    }
}
