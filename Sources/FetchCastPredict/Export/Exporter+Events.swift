import FetchCastStore
import FetchCastTrace

extension Exporter {
    /// `events`: the rows of the `events` view passing the device, app and time filters, with
    /// the condition columns when `withConditions` (the store holds `state` rows).
    static func writeEvents<Out: TextOutputStream>(
        _ request: ExportRequest, store: Store, withConditions: Bool, writer: inout ExportWriter<Out>, to out: inout Out
    ) throws {
        if let device = request.device, !device.isEmpty, !(try store.deviceNames().values.contains(device)) {
            throw ExportError.unknownDevice(device)
        }
        if let app = request.app, !(try store.appNames().values.contains(app)) {
            throw ExportError.unknownApp(app)
        }
        if let from = request.from, let to = request.to, to <= from {
            throw ExportError.emptyWindow(from: from, to: to)
        }
        let filter = EventFilter(
            device: request.device, app: request.app,
            fromMicros: request.from.map(micros), toMicros: request.to.map(micros))
        try store.scanEventRows(filter) { e in
            var values: [ExportValue] = [
                .integer(e.timeUTC), .integer(e.utcOffsetSeconds), .text(e.device), .text(e.app), .text(e.event),
                e.result.map(ExportValue.text) ?? .null, e.bytes.map(ExportValue.integer) ?? .null,
                e.durationMs.map(ExportValue.integer) ?? .null, .integer(e.timeMicros), .integer(e.fileID), .integer(e.line),
            ]
            if withConditions {
                values += [
                    e.network.map(ExportValue.text) ?? .null, e.power.map(ExportValue.text) ?? .null,
                    e.battery.map(ExportValue.integer) ?? .null, e.lowPower.map(ExportValue.text) ?? .null,
                ]
            }
            writer.write(values, to: &out)
        }
    }

    /// Unix seconds to whole microseconds, rounding up so that `from`/`to` keep their meaning
    /// (at or after, before) for fractional times.
    private static func micros(_ seconds: Double) -> Int64 {
        Int64((seconds * 1_000_000).rounded(.up))
    }
}
