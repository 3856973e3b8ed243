import FetchCastCore
import FetchCastModel
import FetchCastTrace

/// A population learned from traces (`evaluate --prior-from`): the pooled sums and each
/// device's share of them, so that a replayed device that is also in the population gets a
/// prior from the *other* devices only (leave-one-out), never one that already knows it.
public struct PopulationSample: Sendable {
    /// Every pooled device's sums added up.
    package let sums: PopulationSums
    /// Each pooled device's own share, by the device id's bytes (two ids that differ only in
    /// their Unicode normalisation are two devices, as in the trace).
    package let contributions: [[UInt8]: PopulationSums]
    /// The prior of the whole population (for devices not in it).
    public let prior: PopulationPrior
    /// Each trace's SHA-256, in the order given (computed as the trace was read).
    public let sha256: [String]

    /// The prior for a replayed device: the population without `device` when it is part of it.
    /// - Complexity: O(the device's apps × 168 + apps²) when left out; O(apps) otherwise.
    public func prior(for device: String, appNames: [String]) -> DevicePrior {
        if let own = contributions[Array(device.utf8)] { return sums.devicePrior(excluding: own, names: appNames) }
        return DevicePrior(prior, names: appNames)
    }

    /// How many of `devices` are in the population (replayed with a leave-one-out prior).
    public func overlap(with devices: DeviceIDs) -> Int { devices.utf8.filter { contributions[$0] != nil }.count }
}

/// Learns a population prior from traces (`evaluate --prior-from`), so that the `learned`
/// policy replayed on held-out users starts from what the population does, as `predict` does
/// from the store's other devices.
public enum PriorBuilder {
    /// Reads traces, folds each device's events into a ``DeviceModel``, and pools them.
    ///
    /// - Parameters:
    ///   - traces: Trace files (same format as `ingest`).
    ///   - devices: Only these devices (all when `nil`).
    ///   - tau: The freshness window the models learn sessions with.
    ///   - options: How values are read.
    /// - Returns: The pooled sums, each device's share, the whole population's prior and each
    ///   trace's SHA-256.
    /// - Throws: ``TraceError`` for bad input.
    /// - Complexity: O(events) time, O(devices × apps) memory.
    public static func population(traces: [String], devices: DeviceIDs?, tau: Double, options: TraceOptions = TraceOptions()) throws(TraceError) -> PopulationSample {
        var (learner, names, hashes) = try learn(traces: traces, devices: devices, tau: tau, options: options)
        var contributions: [[UInt8]: PopulationSums] = [:]
        // Sums are exact (PopulationSums quantises), so the order devices are added in does not
        // matter; sorted anyway, for readers.
        for id in learner.models.keys.sorted(by: { names[Int($0)].utf8.lexicographicallyPrecedes(names[Int($1)].utf8) }) {
            contributions[Array(names[Int(id)].utf8)] = learner.pool(id, name: { names[Int($0)] })
        }
        let sums = learner.population
        return PopulationSample(sums: sums, contributions: contributions, prior: sums.prior(), sha256: hashes)
    }

    /// The fleet fold of ``population(traces:devices:tau:options:)``: every device's model, keyed
    /// by its symbol, and the symbols' names (devices and apps share one symbol table).
    static func learn(traces: [String], devices: DeviceIDs?, tau: Double, options: TraceOptions) throws(TraceError)
        -> (learner: FleetLearner<Int32>, names: [String], sha256: [String])
    {
        let symbols = SymbolTable()
        var learner = FleetLearner<Int32>(configuration: ModelConfiguration(tau: tau))
        var hashes: [String] = []
        // Names as known to this thread (the source interns them on its own).
        var names: [String] = []
        // Per symbol, whether `devices` keeps it (looked up once per device, not per event).
        var kept: [Bool] = []
        hashes = try forEachBatch(of: traces, symbols: symbols, options: options) { batch in
            names += batch.newNames
            if let devices { kept += batch.newNames.map(devices.contains) }
            for e in batch.events where e.kind != .state {
                let event = DeviceEvent(time: e.time, utcOffsetSeconds: e.utcOffsetSeconds, app: e.app, kind: e.kind, result: e.result)
                if e.device == EncodedEvent.everyDevice {
                    learner.observe(event, device: nil)
                } else if devices == nil || kept[Int(e.device)] {
                    learner.observe(event, device: e.device)
                }
            }
        }
        return (learner, names, hashes)
    }

    /// Reads `traces` in order, a batch of events at a time (names interned in `symbols`).
    /// - Returns: Each file's SHA-256.
    static func forEachBatch(
        of traces: [String], symbols: SymbolTable, options: TraceOptions, _ body: (EventBatch) -> Void
    ) throws(TraceError) -> [String] {
        var hashes: [String] = []
        for path in traces {
            let source = EventSource(try TraceReader(path: path, symbols: symbols, options: options), batchSize: 8192, capacity: 4)
            read: while true {
                switch source.next() {
                case .batch(let batch):
                    body(batch)
                case .end(let trace):
                    hashes.append(trace.sha256)
                    break read
                case .failure(let error):
                    throw error
                }
            }
        }
        return hashes
    }
}
