import FetchCastCore
import FetchCastModel
import FetchCastStore
import FetchCastTrace

extension ModelRepository {
    /// Calls `body` for each event numbered above `afterID` of the devices in `devices` and
    /// each publish to every device, in ingest order (``ModelStore/forEachEvent(afterID:devices:_:)``),
    /// inside the caller's transaction. A request's deadline ends a long read (a past plan's
    /// refold, a backlog) between batches.
    func forEachEvent(afterID: Int64, devices: ClosedRange<Int64>, _ body: (EncodedEvent) throws -> Void) async throws {
        try await store.forEachEvent(afterID: afterID, devices: devices) { batch in
            try WorkDeadline.checkCurrent()
            for e in batch { try body(e) }
        }
    }

    /// A stored event (numbered with the store's ids) as the model sees it.
    static func event(_ e: EncodedEvent) -> DeviceEvent {
        DeviceEvent(time: Double(e.timeMicros) / 1_000_000, utcOffsetSeconds: e.utcOffsetSeconds, app: e.app, kind: e.kind, result: e.result)
    }

    /// The device id (`devices.id`) of a stored event; `nil` for a publish to every device.
    static func device(of e: EncodedEvent) -> Int64? { e.device == EncodedEvent.everyDevice ? nil : Int64(e.device) }

    /// Calls `body` for each event of `device` in [`fromMicros`, `beforeMicros`) and each
    /// publish to every device then, in the order a policy is told of them: the store's time
    /// order, each instant arranged by ``InstantOrder`` (what the replay does with the same
    /// events). Inside the caller's transaction.
    /// - Complexity: O(log n + the rows read), through the store's (device, time) index.
    func forEachHistoryEvent(
        ofDevice device: Int64, fromMicros: Int64 = .min, beforeMicros: Int64, _ body: (StoredEvent) throws -> Void
    ) async throws {
        var instant = InstantOrder.Buffer<StoredEvent>()
        try await store.deviceHistory(ofDevice: device, fromMicros: fromMicros, beforeMicros: beforeMicros) { e in
            try instant.add(e, time: e.timeMicros, step: Self.step(of: e), to: body)
        }
        try instant.flush(to: body)
    }

    /// Where a stored event stands among the events of its instant (``InstantOrder``).
    static func step(of e: StoredEvent) -> InstantOrder.Step { InstantOrder.step(of: e.kind, everyDevice: e.device == nil) }
}
