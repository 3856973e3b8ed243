import FetchCastCore
import FetchCastModel
import FetchCastTrace

/// ``HabitLikelihood`` over trace files: `fetchcast habits score`.
public enum HabitScoring {
    /// One device's score, by name.
    public struct DeviceScore: Sendable {
        public var device: String
        public var windows: Int
        public var launched: Int
        /// Mean log loss (nats a window) and Brier score: gaps and hours, then habit clock.
        public var logLossBase: Double, logLossHabit: Double
        public var brierBase: Double, brierHabit: Double
    }

    /// Every device's score (in name order) and the pooled one (`device` "all").
    /// - Parameters:
    ///   - traces: Trace files, read as `evaluate` reads them (time order per device).
    ///   - devices: Only these devices (all when `nil`).
    ///   - tau: The window τ, seconds.
    public static func score(traces: [String], devices: DeviceIDs?, tau: Double, options: TraceOptions = TraceOptions()) throws(TraceError)
        -> (devices: [DeviceScore], all: DeviceScore)
    {
        let symbols = SymbolTable()
        var names: [String] = []
        var kept: [Bool] = []
        var events: [Int32: [DeviceEvent]] = [:]
        _ = try PriorBuilder.forEachBatch(of: traces, symbols: symbols, options: options) { batch in
            names += batch.newNames
            kept += batch.newNames.map { devices?.contains($0) ?? true }
            for e in batch.events where e.kind != .state && e.device != EncodedEvent.everyDevice && kept[Int(e.device)] {
                events[e.device, default: []].append(
                    DeviceEvent(time: e.time, utcOffsetSeconds: e.utcOffsetSeconds, app: e.app, kind: e.kind, result: e.result))
            }
        }
        let likelihood = HabitLikelihood(configuration: ModelConfiguration(tau: tau))
        var all = HabitLikelihood.Score()
        var out: [DeviceScore] = []
        for (device, list) in events {
            // A stable sort: rows of one instant keep their order in the file.
            let sorted = list.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
            let score = likelihood.score(sorted)
            all.merge(score)
            out.append(Self.row(names[Int(device)], score))
        }
        out.sort { $0.device.utf8.lexicographicallyPrecedes($1.device.utf8) }
        return (out, row("all", all))
    }

    static func row(_ device: String, _ s: HabitLikelihood.Score) -> DeviceScore {
        DeviceScore(
            device: device, windows: s.windows, launched: s.launched, logLossBase: s.meanLogLossBase, logLossHabit: s.meanLogLossHabit,
            brierBase: s.meanBrierBase, brierHabit: s.meanBrierHabit)
    }
}
