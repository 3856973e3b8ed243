import FetchCastStore
import FetchCastTrace

extension Exporter {
    /// Writes the `events` table from any engine's event log: what
    /// ``export(_:from:to:onSaveFailure:)`` writes for `events` from an SQLite store, byte for
    /// byte, for the same ingested files.
    ///
    /// - Parameters:
    ///   - request: The filters and format (its kind must be `events`; the model's tables come
    ///     from a repository: ``export(_:from:to:onSaveFailure:)-(_,ModelRepository,_,_)``).
    ///   - location: The store, on either engine; its event log is opened, read in one snapshot
    ///     and closed.
    ///   - out: Where the table goes.
    /// - Returns: The number of data rows written (the CSV header not counted).
    /// - Throws: ``ExportError`` for another table, an unknown device or app or an empty window;
    ///   ``StoreError`` when the log cannot be opened or read; what writing to `out` throws.
    /// - Complexity: O(n log n) in the log's events (the engine's sort), streaming rows.
    @discardableResult
    public static func exportEvents<Out: TextOutputStream>(
        _ request: ExportRequest, from location: StoreLocation, to out: inout Out
    ) async throws -> Int {
        guard request.kind == .events else { throw ExportError.wrongSource(request.kind) }
        let log = try await location.openLog(false)
        do {
            let rows = try await exportEvents(request, from: log, to: &out)
            await log.close()
            return rows
        } catch {
            await log.close()
            throw error
        }
    }

    /// ``exportEvents(_:from:to:)-(_,StoreLocation,_)`` from an event log already open.
    @discardableResult
    package static func exportEvents<Out: TextOutputStream>(
        _ request: ExportRequest, from log: any EventLogScanner, to out: inout Out
    ) async throws -> Int {
        precondition(request.kind == .events, "exportEvents writes the events table only")
        // The events of a log without state rows keep their v1 columns, byte for byte.
        let withConditions = try await log.hasStateRows()
        var columns = request.kind.columns
        if withConditions { columns += Store.eventColumns.suffix(Store.conditionColumnCount) }
        var writer = ExportWriter<Out>(columns: columns, format: request.format)
        // Compared with Swift's `==`, as the SQLite path compares them.
        let deviceNames = request.device == nil ? [] : try await log.sortedDeviceNames()
        let appNames = request.app == nil ? [] : try await log.sortedAppNames()
        try checkEvents(request, knowsDevice: { deviceNames.contains($0) }, knowsApp: { appNames.contains($0) })
        try await log.scanEventRows(eventFilter(request)) { e in writer.write(values(of: e, withConditions: withConditions), to: &out) }
        writer.finish(to: &out)
        return writer.rows
    }

    /// Refuses a request for a device or app the store does not hold, or an empty window.
    private static func checkEvents(
        _ request: ExportRequest, knowsDevice: (String) throws -> Bool, knowsApp: (String) throws -> Bool
    ) throws {
        if let device = request.device, !device.isEmpty, !(try knowsDevice(device)) {
            throw ExportError.unknownDevice(device)
        }
        if let app = request.app, !(try knowsApp(app)) {
            throw ExportError.unknownApp(app)
        }
        if let from = request.from, let to = request.to, to <= from {
            throw ExportError.emptyWindow(from: from, to: to)
        }
    }

    /// The rows a request keeps.
    private static func eventFilter(_ request: ExportRequest) -> EventFilter {
        EventFilter(
            device: request.device, app: request.app,
            fromMicros: request.from.map(micros), toMicros: request.to.map(micros))
    }

    /// One row's values, the condition columns last when `withConditions`.
    private static func values(of e: EventRow, withConditions: Bool) -> [ExportValue] {
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
        return values
    }

    /// Unix seconds to whole microseconds, rounding up so that `from`/`to` keep their meaning
    /// (at or after, before) for fractional times.
    private static func micros(_ seconds: Double) -> Int64 {
        Int64((seconds * 1_000_000).rounded(.up))
    }
}
