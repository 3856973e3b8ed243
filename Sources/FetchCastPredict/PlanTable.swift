import FetchCastModel

/// A device's plans for every start after its last event, computed ahead: what
/// ``Predictor/predict(_:snapshot:)`` answers for a request with default apps and budget, for
/// any `at` later than the device's last event, until the device's next event.
///
/// A plan from `T` is the caught-up scheduler run forward from `T` (docs/model.md), and what the
/// run makes depends on `T` only through which of the scheduler's pending looks come before it
/// (``LearnedPolicy/pendingLooks``) and where the horizon ends: for every `T` in `(wₖ₋₁, wₖ]`
/// the plan is the fetches of the plan from `wₖ` that come before `T` + the horizon. So one
/// plan per pending look answers every start, exactly (`PlanTableTests` compares it with
/// planning from `T` for many `T`). The service's warm-up keeps a table per device in the store
/// beside its caught-up scheduler; a plan request then reads a few kilobytes instead of
/// restoring and running the scheduler.
struct PlanTable: Sendable, Equatable {
    /// Plans start strictly after this instant (the device's last event, Unix seconds).
    var after: Double
    /// One per pending look later than ``after``, earliest first.
    var segments: [Segment]
    /// Whether the scheduler has looks pending after the last segment (looks ahead of habits go
    /// on for days: ``coverage``): a start after it is then not answered from the table.
    var open = false

    /// The plan of the starts in (the previous segment's ``through``, ``through``].
    struct Segment: Sendable, Equatable {
        /// The pending look that ends it: the plan from here.
        var through: Double
        /// The plan from ``through``, every fetch of its horizon.
        var predictions: [Prediction]
    }

    /// How far a plan looks ahead, seconds: ``LearnedPolicy/plan(from:horizon:notBefore:count:)``'s default.
    static let horizon = 86_400.0

    /// The request tables are kept for: a device's default apps and budget, no constraints.
    static let request = PredictionRequest()

    /// Whether a table kept for ``request`` can answer `request` (its device, start, count
    /// and a `notBefore` not after its start aside): the same apps, budget and constraints, and
    /// a scheduler without periodic looks (whose looks would add looks of their own).
    static func keeps(_ request: PredictionRequest) -> Bool {
        request.app == nil && request.apps.isEmpty && request.budget == Self.request.budget && request.horizon == horizon
            && request.topApps == Self.request.topApps && request.constraints.isEmpty && !(request.delivery?.isPush ?? false)
            && SchedulerConfiguration(budget: request.budget).checkInterval == nil
    }

    /// Plans every start after `last` from a scheduler caught up with every event of the device
    /// up to `last` (inclusive).
    /// - Complexity: O(pending looks × a plan).
    init(device: Int64, scheduler: LearnedPolicy, last: Double, snapshot: ModelRepository.Snapshot) {
        after = last
        segments = []
        // A look may schedule the next (a look ahead of a habit, the habit's next window): the
        // looks are found by stepping a copy through them.
        var stepped = scheduler
        var through = last
        while let look = stepped.pendingLooks.first(where: { $0 > through }) {
            guard look <= last + Self.coverage else {
                open = true
                break
            }
            segments.append(Segment(through: look, predictions: Predictor.predictions(
                of: device, scheduler: stepped, from: look, notBefore: look, count: .max, reasonsFrom: scheduler, snapshot: snapshot)))
            stepped.advance(through: look)
            through = look
        }
    }

    init(after: Double, segments: [Segment], open: Bool = false) {
        self.after = after
        self.segments = segments
        self.open = open
    }

    /// How far after the device's last event a table keeps plans: a day. Later starts (looks
    /// ahead of habits go on for ``SchedulerConfiguration/anticipationSilence``) are planned from
    /// the scheduler when asked.
    static let coverage = 86_400.0

    /// The plan from `start` (at most `count` fetches); `nil` when `start` is not after
    /// ``after`` or after the looks the table covers (the plan must then be made from the events).
    func predictions(from start: Double, count: Int) -> [Prediction]? {
        guard start > after else { return nil }
        guard let segment = segments.first(where: { start <= $0.through }) else { return open ? nil : [] }
        return Self.cut(segment.predictions, from: start, count: count)
    }

    /// A segment's plan as asked from `start`: the fetches before `start` + the horizon, at
    /// most `count` of them.
    private static func cut(_ plan: [Prediction], from start: Double, count: Int) -> [Prediction] {
        let end = start + horizon
        return Array(plan.lazy.filter { $0.fetchAtUnix < end }.prefix(max(0, count)))
    }
}

extension PlanTable {
    /// The table's bytes: ``after``, then per segment its ``Segment/through`` and its
    /// predictions (app, fetch time and its text, the two probabilities, the reason; the device
    /// is the table's own and not repeated).
    func binaryEncoded() -> [UInt8] {
        var w = BinaryWriter()
        w.double(after)
        w.bool(open)
        w.int(segments.count)
        for segment in segments {
            w.double(segment.through)
            w.int(segment.predictions.count)
            for p in segment.predictions {
                w.blob(Array(p.app.utf8))
                w.blob(Array(p.fetchAt.utf8))
                w.double(p.fetchAtUnix)
                w.double(p.launchProbability)
                w.double(p.newDataProbability)
                w.blob(Array(p.reason.utf8))
            }
        }
        return w.bytes
    }

    /// Bytes that are not a table (a damaged row: the plan is then made from the events).
    struct Damaged: Error {}

    /// Decodes ``binaryEncoded()``, its predictions for `device`.
    init(binary bytes: UnsafeRawBufferPointer, device: String) throws {
        var r = BinaryReader(bytes)
        after = try r.double()
        open = try r.bool()
        segments = []
        for _ in 0..<(try r.count()) {
            let through = try r.double()
            segments.append(Segment(through: through, predictions: try Self.readPlan(&r, device: device)))
        }
        guard r.offset == bytes.count else { throw Damaged() }
    }

    /// ``predictions(from:count:)`` of the table in `bytes`, decoding only the segment of
    /// `start` (the others are stepped over): what a plan request reads.
    static func predictions(binary bytes: UnsafeRawBufferPointer, device: String, from start: Double, count: Int) throws -> [Prediction]? {
        var r = BinaryReader(bytes)
        guard start > (try r.double()) else { return nil }
        let open = try r.bool()
        for _ in 0..<(try r.count()) {
            if start <= (try r.double()) { return cut(try readPlan(&r, device: device), from: start, count: count) }
            for _ in 0..<(try r.count()) {
                for _ in 0..<2 { _ = try r.blob() }
                for _ in 0..<3 { _ = try r.double() }
                _ = try r.blob()
            }
        }
        guard r.offset == bytes.count else { throw Damaged() }
        return open ? nil : []
    }

    /// One segment's predictions for `device`.
    private static func readPlan(_ r: inout BinaryReader, device: String) throws -> [Prediction] {
        func text() throws -> String { String(decoding: try r.blob(), as: UTF8.self) }
        var predictions: [Prediction] = []
        for _ in 0..<(try r.count()) {
            let app = try text(), fetchAt = try text()
            let unix = try r.double(), launch = try r.double(), newData = try r.double()
            predictions.append(Prediction(
                device: device, app: app, fetchAt: fetchAt, fetchAtUnix: unix, launchProbability: launch,
                newDataProbability: newData, reason: try text()))
        }
        return predictions
    }
}
