import Foundation

/// How well the habit clock predicts a session, against the gaps and hours it replaces: for
/// every half hour `t` of a device's history and every app whose habit speaks at `t`
/// (``DeviceModel/sessionChances(app:at:prior:)`` gives a habit chance), both chances of a
/// session in `(t, t + τ]`, known from the events up to `t` only, scored against whether the
/// app was launched in that window. The two are compared where the scheduler uses the habit's.
package struct HabitLikelihood: Sendable {
    /// The scores of one set of windows.
    package struct Score: Sendable {
        /// Windows scored, and those with a launch of their app.
        package var windows = 0
        package var launched = 0
        /// Sums of the log loss and the Brier score of each predictor.
        package var logLossBase = 0.0, logLossHabit = 0.0
        package var brierBase = 0.0, brierHabit = 0.0

        package init() {}

        /// Mean log loss (nats a window) and Brier score of the gaps and hours, and of the habit.
        package var meanLogLossBase: Double { logLossBase / Double(max(1, windows)) }
        package var meanLogLossHabit: Double { logLossHabit / Double(max(1, windows)) }
        package var meanBrierBase: Double { brierBase / Double(max(1, windows)) }
        package var meanBrierHabit: Double { brierHabit / Double(max(1, windows)) }

        mutating func add(base: Double, habit: Double, launched y: Bool) {
            windows += 1
            if y { launched += 1 }
            func loss(_ p: Double) -> Double {
                let q = min(max(p, 1e-6), 1 - 1e-6)
                return y ? -log(q) : -log(1 - q)
            }
            let target = y ? 1.0 : 0.0
            logLossBase += loss(base)
            logLossHabit += loss(habit)
            brierBase += (base - target) * (base - target)
            brierHabit += (habit - target) * (habit - target)
        }

        package mutating func merge(_ other: Score) {
            windows += other.windows
            launched += other.launched
            logLossBase += other.logLossBase
            logLossHabit += other.logLossHabit
            brierBase += other.brierBase
            brierHabit += other.brierHabit
        }
    }

    /// The model's constants (τ is the window).
    package let configuration: ModelConfiguration

    package init(configuration: ModelConfiguration) {
        self.configuration = configuration
    }

    /// Scores one device's events (in time order, state rows excluded), each half hour from the
    /// first event's to the last's, with the device's own history only (no population prior).
    package func score(_ events: [DeviceEvent]) -> Score {
        guard let first = events.first, let last = events.last else { return Score() }
        var launches: [Int32: [Double]] = [:]
        for e in events where e.kind == .launch { launches[e.app, default: []].append(e.time) }
        func launched(_ app: Int32, in window: ClosedRange<Double>) -> Bool {
            guard let times = launches[app] else { return false }
            // The first launch after the window's start (times are sorted).
            var lo = 0, hi = times.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if times[mid] <= window.lowerBound { lo = mid + 1 } else { hi = mid }
            }
            return lo < times.count && times[lo] <= window.upperBound
        }
        var model = DeviceModel(configuration: configuration)
        var score = Score()
        var next = 0
        let step = 1800.0
        var t = (first.time / step).rounded(.up) * step
        while t <= last.time {
            while next < events.count, events[next].time <= t {
                model.observe(events[next])
                next += 1
            }
            for app in model.appsBySessions {
                let chances = model.sessionChances(app: app, at: t, prior: .none)
                guard let habit = chances.habit else { continue }
                score.add(base: chances.base, habit: habit, launched: launched(app, in: t...(t + configuration.tau)))
            }
            t += step
        }
        return score
    }
}
