/// Per app, how the policy's values have compared with what happened on this device, as a
/// factor on later values.
///
/// Every moment the policy weighs an app (with value v > 0) is a forecast that the app's next
/// launch comes within τ and is a session start. The policy sees every launch, so it labels its
/// own forecasts τ later, fetched or not (the label does not depend on fetching), and scales
/// the app's values by (observed + k) / (forecast + k), k = ``pseudoCount`` pseudo-forecasts at
/// ratio 1: a device whose messenger is opened more often than the hour-of-week and co-usage
/// estimates say gets its budget moved toward it. Causal: a forecast counts only once resolved.
struct ValueCalibration: Sendable {
    /// Pseudo-forecasts at a ratio of 1 (shrinks the factor toward 1 until evidence builds).
    static let pseudoCount = 4.0

    private struct Pending: Sendable {
        var time: Double
        var value: Double
    }

    private let tau: Double
    private var pending: [Int32: [Pending]] = [:]
    private var forecast: [Int32: Double] = [:]
    private var observed: [Int32: Double] = [:]

    init(tau: Double) { self.tau = tau }

    /// The factor on the app's values now.
    func factor(_ app: Int32) -> Double {
        ((observed[app] ?? 0) + Self.pseudoCount) / ((forecast[app] ?? 0) + Self.pseudoCount)
    }

    /// Records that the app was weighed at `time` with (uncalibrated) value `value`.
    mutating func weighed(_ app: Int32, value: Double, at time: Double) {
        guard value > 0 else { return }
        pending[app, default: []].append(Pending(time: time, value: value))
    }

    /// A launch of `app` at `time`: resolves the app's forecasts made at or before it (a hit
    /// when it is a session start within τ of the forecast).
    mutating func launched(_ app: Int32, at time: Double, sessionStart: Bool) {
        guard let list = pending[app], !list.isEmpty else { return }
        // Forecasts are appended in time order: the resolved ones are a prefix.
        let due = list.prefix { $0.time <= time }
        for p in due { resolve(app, p, hit: sessionStart && time - p.time <= tau) }
        pending[app] = Array(list.dropFirst(due.count))
    }

    /// Resolves as misses the forecasts more than τ old with no launch of their app since.
    mutating func expire(before now: Double) {
        for app in pending.keys {
            guard let first = pending[app]!.first, now - first.time > tau else { continue }
            let list = pending[app]!
            let stale = list.prefix { now - $0.time > tau }
            for p in stale { resolve(app, p, hit: false) }
            pending[app] = Array(list.dropFirst(stale.count))
        }
    }

    private mutating func resolve(_ app: Int32, _ p: Pending, hit: Bool) {
        forecast[app, default: 0] += p.value
        if hit { observed[app, default: 0] += 1 }
    }
}

extension ValueCalibration {
    /// Writes the calibration's state (``LearnedPolicy/savedState()``).
    func write(to w: inout BinaryWriter) {
        w.double(tau)
        w.int(pending.count)
        for app in pending.keys.sorted() {
            w.int32(app)
            w.int(pending[app]!.count)
            for p in pending[app]! { w.double(p.time); w.double(p.value) }
        }
        for table in [forecast, observed] {
            w.int(table.count)
            for app in table.keys.sorted() { w.int32(app); w.double(table[app]!) }
        }
    }

    /// Reads what ``write(to:)`` wrote.
    init(reading r: inout BinaryReader) throws {
        self.init(tau: try r.double())
        for _ in 0..<(try r.count()) {
            let app = try r.int32()
            var list: [Pending] = []
            for _ in 0..<(try r.count()) { list.append(Pending(time: try r.double(), value: try r.double())) }
            pending[app] = list
        }
        for _ in 0..<(try r.count()) { forecast[try r.int32()] = try r.double() }
        for _ in 0..<(try r.count()) { observed[try r.int32()] = try r.double() }
    }
}
