import FetchCastModel
import FetchCastTrace

/// Learns a ``PopulationPrior`` from the traces of *other* users (`evaluate --prior-from`), so
/// that the `learned` policy replayed on held-out users starts from what the population does,
/// as `predict` does from the store's other devices. Never give it the users you report on.
public enum PriorBuilder {
    /// Reads traces, folds each device's events into a ``DeviceModel``, and pools them.
    ///
    /// - Parameters:
    ///   - traces: Trace files (same format as `ingest`).
    ///   - devices: Only these devices (all when `nil`).
    ///   - tau: The freshness window the models learn sessions with.
    ///   - options: How values are read.
    /// - Returns: The prior and how many devices it pooled.
    /// - Throws: ``TraceError`` for bad input.
    /// - Complexity: O(events) time, O(devices × apps) memory.
    public static func build(traces: [String], devices: Set<String>?, tau: Double, options: TraceOptions = TraceOptions()) throws(TraceError) -> PopulationPrior {
        let symbols = SymbolTable()
        var models: [Int32: DeviceModel] = [:]
        var everyone = DeviceModel(configuration: ModelConfiguration(tau: tau))
        var batch: [EncodedEvent] = []
        for path in traces {
            let reader = try TraceReader(path: path, symbols: symbols, options: options, hashing: false)
            while try reader.next(into: &batch) {
                for e in batch {
                    let event = DeviceEvent(time: e.time, utcOffsetSeconds: e.utcOffsetSeconds, app: e.app, kind: e.kind, result: e.result)
                    if e.device == EncodedEvent.everyDevice {
                        everyone.observe(event)
                        for key in models.keys { models[key]!.observe(event) }
                        continue
                    }
                    if let devices, !devices.contains(symbols.name(e.device)) { continue }
                    if models[e.device] == nil {
                        var fresh = DeviceModel(configuration: ModelConfiguration(tau: tau))
                        fresh.adoptContent(from: everyone)
                        models[e.device] = fresh
                    }
                    models[e.device]!.observe(event)
                }
                batch.removeAll(keepingCapacity: true)
            }
        }
        let names = symbols.allNames
        return PopulationPrior.build(from: models.keys.sorted { names[Int($0)] < names[Int($1)] }.map { id in
            (model: models[id]!, name: { names[Int($0)] })
        })
    }
}
