import FetchCastModel
import FetchCastPredict
import FetchCastStore
import FetchCastTrace

/// Writes the store's events and what the model learned from them as tables
/// (`fetchcast export`), for pandas, R or a spreadsheet.
///
/// Output is deterministic: the same store and request give byte-identical output. Tables other
/// than `events` first fold newly ingested events into the persisted model, as `predict` does.
public enum Exporter {
    /// The longest `predictions` window, days.
    public static let maximumPredictionDays = 366

    /// Writes one table.
    ///
    /// - Parameters:
    ///   - request: The table, filters and format.
    ///   - store: The store to read (and whose model state is brought up to date).
    ///   - out: Where the table goes.
    ///   - onSaveFailure: Called once when the model state folded for this export could not be
    ///     saved in the store (see ``ModelRepository/saveFailure``); the export is complete anyway.
    /// - Returns: The number of data rows written (the CSV header not counted).
    /// - Throws: ``ExportError`` for an unknown device or app or a bad window; ``StoreError``
    ///   when the store cannot be read.
    /// - Complexity: `events`: O(n log n) in the store's events. `model`: O(devices × apps ×
    ///   168 × 168) after folding new events. `cousage`: O(pairs seen). `predictions`: O(days ×
    ///   apps × 288) valuations per device.
    @discardableResult
    public static func export<Out: TextOutputStream>(
        _ request: ExportRequest, from store: Store, to out: inout Out, onSaveFailure: (StoreError) -> Void = { _ in }
    ) async throws -> Int {
        switch request.kind {
        case .events: try await exportEvents(request, from: store, to: &out)
        case .model, .cousage, .predictions: try await export(request, from: ModelRepository(modelStore: store), to: &out, onSaveFailure: onSaveFailure)
        }
    }

    /// Writes one of the tables the model makes (`model`, `cousage`, `predictions`) from a
    /// repository over a store of either engine (``ModelRepository/init(location:configuration:)``):
    /// what ``export(_:from:to:onSaveFailure:)`` writes from an SQLite store, byte for byte. It
    /// folds newly ingested events first, as `predict` does. The `events` table is the event
    /// log's: ``exportEvents(_:from:to:)``.
    ///
    /// - Parameters: As for ``export(_:from:to:onSaveFailure:)``, `repository` in place of the store.
    /// - Returns: The number of data rows written (the CSV header not counted).
    /// - Throws: ``ExportError`` for an `events` request, an unknown device or app or a bad
    ///   window; ``StoreError`` when the store cannot be read.
    @discardableResult
    public static func export<Out: TextOutputStream>(
        _ request: ExportRequest, from repository: ModelRepository, to out: inout Out, onSaveFailure: (StoreError) -> Void = { _ in }
    ) async throws -> Int {
        guard request.kind != .events else { throw ExportError.wrongSource(request.kind) }
        var writer = ExportWriter<Out>(columns: request.kind.columns, format: request.format)
        // A batch of devices at a time, in name order: the output is the same as from one
        // snapshot of every device, without holding every device's state.
        var checked = false
        var unsaved: StoreError?
        defer { if let unsaved { onSaveFailure(unsaved) } }
        try await repository.forEachBatch(device: request.device) { snapshot in
            if unsaved == nil { unsaved = repository.saveFailure }
            if !checked {
                try check(request, against: snapshot)
                checked = true
            }
            switch request.kind {
            case .model: writeModel(request, snapshot: snapshot, writer: &writer, to: &out)
            case .cousage: writeCoUsage(request, snapshot: snapshot, writer: &writer, to: &out)
            default: try await writePredictions(request, snapshot: snapshot, writer: &writer, to: &out)
            }
        }
        writer.finish(to: &out)
        return writer.rows
    }

    /// Throws when the request names a device or app the snapshot does not know.
    static func check(_ request: ExportRequest, against snapshot: ModelRepository.Snapshot) throws {
        if let device = request.device, snapshot.device(named: device).flatMap({ snapshot.models[$0] }) == nil {
            throw ExportError.unknownDevice(device)
        }
        if let app = request.app, snapshot.app(named: app) == nil {
            throw ExportError.unknownApp(app)
        }
    }

    /// The devices a request covers, by name.
    static func devices(_ request: ExportRequest, snapshot: ModelRepository.Snapshot) -> [(id: Int64, name: String, model: DeviceModel)] {
        snapshot.models
            .map { (id: $0.key, name: snapshot.deviceNames[$0.key] ?? String($0.key), model: $0.value) }
            .filter { device in request.device.map { ModelRepository.same(device.name, $0) } ?? true }
            .sorted { ModelRepository.precedes($0.name, $1.name) }
    }

    /// The apps of a device a request covers: the named app, else the device's apps by
    /// sessions (all, or the top `topApps`).
    static func apps(_ request: ExportRequest, model: DeviceModel, snapshot: ModelRepository.Snapshot, defaultTop: Int?) -> [Int32] {
        let ranked = model.appsBySessions
        let top = (request.topApps ?? defaultTop).map { Array(ranked.prefix($0)) } ?? ranked
        if let name = request.app, let id = snapshot.app(named: name) {
            return [Int32(truncatingIfNeeded: id)]
        }
        return top
    }
}
