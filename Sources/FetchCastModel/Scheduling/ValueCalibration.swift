import DequeModule

/// Per app, how the policy's values have compared with what happened on this device, as a
/// factor on later values.
///
/// Every moment the policy weighs an app (with value v > 0) is a forecast that the app's next
/// launch comes within τ and is a session start. The policy sees every launch, so it labels its
/// own forecasts τ later, fetched or not (the label does not depend on fetching), and scales
/// the app's values by (observed + k) / (forecast + k), k = ``pseudoCount`` pseudo-forecasts at
/// ratio 1: a device whose messenger is opened more often than the hour-of-week and co-usage
/// estimates say gets its budget moved toward it. Causal: a forecast counts only once resolved.
///
/// The same labels also give, per device, how the scaled values (the ones the policy ranks by)
/// translate into outcomes: ``outcome(of:reacting:)``, a least-squares line of the label on the
/// scaled value, one for the forecasts made in reaction to a launch and one for the others. The
/// condition-aware policy prices a cellular wakeup in those units
/// (``SchedulerConfiguration/cellularWakeupCost``).
struct ValueCalibration: Sendable {
    /// Pseudo-forecasts at a ratio of 1 (shrinks the factor toward 1 until evidence builds).
    static let pseudoCount = 4.0

    private struct Pending: Sendable {
        var time: Double
        var value: Double
        /// The value the policy ranked by: `value` × the app's factor then, at most 1.
        var scaled: Double
        /// Whether the forecast reacted to a launch (the value is the launch response).
        var reacting: Bool
    }

    private let tau: Double
    /// Forecasts whose scaled value is below this are left out of the outcome lines (the
    /// policy's ``SchedulerConfiguration/minimumValue``: lower values never start a wakeup).
    private let outcomeFloor: Double
    /// Per app, unresolved forecasts in time order (a `Deque`: resolved ones leave from the
    /// front at O(1) each, however many a burst of launches left pending).
    private var pending: [Int32: Deque<Pending>] = [:]
    private var forecast: [Int32: Double] = [:]
    private var observed: [Int32: Double] = [:]
    /// Outcome on scaled value: forecasts not reacting to a launch, reacting ones, all.
    private(set) var fits = [OutcomeFit](repeating: OutcomeFit(), count: 3)

    init(tau: Double, outcomeFloor: Double = 0.05) {
        self.tau = tau
        self.outcomeFloor = outcomeFloor
    }

    /// The factor on the app's values now.
    func factor(_ app: Int32) -> Double {
        ((observed[app] ?? 0) + Self.pseudoCount) / ((forecast[app] ?? 0) + Self.pseudoCount)
    }

    /// Records that the app was weighed at `time` with (uncalibrated) value `value`, in reaction
    /// to a launch or not.
    mutating func weighed(_ app: Int32, value: Double, at time: Double, reacting: Bool = false) {
        guard value > 0 else { return }
        pending[app, default: []].append(Pending(time: time, value: value, scaled: min(1, value * factor(app)), reacting: reacting))
    }

    /// The chance that a forecast of scaled value `value` comes true on this device, from its
    /// resolved forecasts of the same kind (reacting to a launch or not; all of them while a kind
    /// has fewer than ``OutcomeFit/minimumCount``); `nil` before ``OutcomeFit/minimumCount``
    /// forecasts in all were resolved.
    func outcome(of value: Double, reacting: Bool) -> Double? {
        guard let line = fits[reacting ? 1 : 0].line ?? fits[2].line else { return nil }
        return line.intercept + line.slope * value
    }

    /// The chance that a forecast of scaled value `value`, of either kind, comes true; `nil`
    /// before ``OutcomeFit/minimumCount`` forecasts were resolved.
    func outcome(of value: Double) -> Double? {
        fits[2].line.map { $0.intercept + $0.slope * value }
    }

    /// A launch of `app` at `time`: resolves the app's forecasts made at or before it (a hit
    /// when it is a session start within τ of the forecast).
    mutating func launched(_ app: Int32, at time: Double, sessionStart: Bool) {
        // Forecasts are appended in time order: the resolved ones are a prefix.
        let due = pending[app].map { list in Array(list.prefix { $0.time <= time }) } ?? []
        guard !due.isEmpty else { return }
        for p in due { resolve(app, p, hit: sessionStart && time - p.time <= tau) }
        pending[app]!.removeFirst(due.count)
    }

    /// Resolves as misses the forecasts more than τ old with no launch of their app since.
    mutating func expire(before now: Double) {
        // The keys copied first, so that no view of the dictionary shares (and so copies) a list
        // while it is trimmed in place.
        for app in Array(pending.keys) {
            guard let first = pending[app]!.first, now - first.time > tau else { continue }
            let stale = Array(pending[app]!.prefix { now - $0.time > tau })
            for p in stale { resolve(app, p, hit: false) }
            pending[app]!.removeFirst(stale.count)
        }
    }

    private mutating func resolve(_ app: Int32, _ p: Pending, hit: Bool) {
        forecast[app, default: 0] += p.value
        if hit { observed[app, default: 0] += 1 }
        guard p.scaled >= outcomeFloor else { return }
        fits[p.reacting ? 1 : 0].add(p.scaled, outcome: hit ? 1 : 0)
        fits[2].add(p.scaled, outcome: hit ? 1 : 0)
    }
}

/// A least-squares line of an outcome (0 or 1) on a value, from running sums.
struct OutcomeFit: Sendable, Hashable {
    /// Fewer resolved forecasts than this give no line.
    static let minimumCount = 50.0
    /// The slope is kept within these: a device whose values tell its moments apart hardly at
    /// all would otherwise price a wakeup at an unbounded value, and one with a steep line would
    /// price it at next to nothing.
    static let slopes = 0.05...1.0

    var count = 0.0, values = 0.0, outcomes = 0.0, squares = 0.0, products = 0.0

    mutating func add(_ value: Double, outcome: Double) {
        count += 1
        values += value
        outcomes += outcome
        squares += value * value
        products += value * outcome
    }

    /// The line, its slope clamped to ``slopes``, through the means; `nil` with fewer than
    /// ``minimumCount`` points or values that do not vary.
    var line: (intercept: Double, slope: Double)? {
        guard count >= Self.minimumCount else { return nil }
        let meanValue = values / count, meanOutcome = outcomes / count
        let variance = squares / count - meanValue * meanValue
        guard variance > 1e-9 else { return nil }
        let slope = min(Self.slopes.upperBound, max(Self.slopes.lowerBound, (products / count - meanValue * meanOutcome) / variance))
        return (meanOutcome - slope * meanValue, slope)
    }
}

extension ValueCalibration {
    /// Writes the calibration's state (``LearnedPolicy/savedState()``).
    func write(to w: inout BinaryWriter) {
        w.double(tau)
        w.double(outcomeFloor)
        w.int(pending.count)
        for app in pending.keys.sorted() {
            w.int32(app)
            w.int(pending[app]!.count)
            for p in pending[app]! { w.double(p.time); w.double(p.value); w.double(p.scaled); w.bool(p.reacting) }
        }
        for table in [forecast, observed] {
            w.int(table.count)
            for app in table.keys.sorted() { w.int32(app); w.double(table[app]!) }
        }
        for f in fits { for x in [f.count, f.values, f.outcomes, f.squares, f.products] { w.double(x) } }
    }

    /// Reads what ``write(to:)`` wrote.
    init(reading r: inout BinaryReader) throws {
        self.init(tau: try r.double(), outcomeFloor: try r.double())
        for _ in 0..<(try r.count()) {
            let app = try r.int32()
            var list: Deque<Pending> = []
            for _ in 0..<(try r.count()) {
                list.append(Pending(time: try r.double(), value: try r.double(), scaled: try r.double(), reacting: try r.bool()))
            }
            pending[app] = list
        }
        for _ in 0..<(try r.count()) { forecast[try r.int32()] = try r.double() }
        for _ in 0..<(try r.count()) { observed[try r.int32()] = try r.double() }
        for i in fits.indices {
            fits[i] = OutcomeFit(
                count: try r.double(), values: try r.double(), outcomes: try r.double(), squares: try r.double(), products: try r.double())
        }
    }
}
