import FetchCastCore
import FetchCastModel
import FetchCastStore
import FetchCastTrace
import Foundation
import Testing
import FetchCastTestSupport
@testable import FetchCastPredict

/// A device's plans kept ahead (``PlanTable``, saved by the warm-up) answer exactly what planning
/// from the events answers, for every start after the device's last event, and only while they
/// are valid: the same prior epoch and no event of the device added since.
struct PlanTableTests {
    private static let data = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Data")
    /// The bundled sample, and the same with its generated `state` layer (plans then weigh
    /// the device's conditions).
    static let samples = ["ubiqlog-sample.csv.gz", "ubiqlog-sample-conditions.csv.gz"]

    /// A store holding `rows` (or the bundled sample), folded and warmed as `fetchcast serve` does.
    private final class Served {
        let temporary = try! TemporaryStore()
        let store: Store

        init(rows: [String]? = nil, sample: String = PlanTableTests.samples[0]) async throws {
            store = try temporary.open()
            if let rows {
                try temporary.ingest(rows, into: store)
            } else {
                _ = try Ingestor(store: store, options: .init(now: { 1_700_000_000 }))
                    .ingest(path: PlanTableTests.data.appendingPathComponent(sample).path)
            }
            try await fold()
            try await warm()
        }

        func fold() async throws { _ = try await ModelRepository(store: store).refresh(devices: []) }

        @discardableResult
        func warm() async throws -> ModelRepository {
            let warmer = ModelRepository(store: store)
            warmer.savesFolds = false
            _ = try await warmer.keepSchedulersCurrent()
            return warmer
        }

        /// A reader as the service's: saves nothing.
        func reader() -> ModelRepository {
            let reader = ModelRepository(store: store)
            reader.savesFolds = false
            reader.savesSchedulers = false
            return reader
        }

        /// The plan from the table (`nil` when none applies) and the plan made from the events.
        func plans(_ request: PredictionRequest) async throws -> (kept: [Prediction]?, made: [Prediction]) {
            let kept = try await reader().precomputedPlan(request)
            let made = try await Predictor.predict(request, snapshot: try reader().refresh(devices: [request.device!]))
            return (kept, made)
        }

        /// The saved table of `device`.
        func table(_ device: String) async throws -> PlanTable? {
            let repository = reader()
            guard let id = try await repository.refresh(devices: [device]).device(named: device) else { return nil }
            let row = try store.withModelState(key: repository.planTableKey(device: id)) { _, bytes in Array(bytes) }
            return try row.map { bytes in
                try bytes.withUnsafeBytes { raw in
                    var r = BinaryReader(raw)
                    _ = try r.int()
                    _ = try r.uint64()
                    _ = try r.uint64()
                    return try PlanTable(binary: try r.blob(), device: device)
                }
            }
        }
    }

    @Test(arguments: samples) func aKeptPlanIsThePlanFromTheEventsForEveryStartAfterTheLastEvent(sample: String) async throws {
        let served = try await Served(sample: sample)
        let devices = try await served.reader().refresh(devices: []).deviceNames.values.sorted()
        #expect(devices.count == 14)
        var compared = 0, nonEmpty = 0
        for device in devices {
            let table = try #require(try await served.table(device), "every device has a table after the warm-up")
            #expect(!table.segments.isEmpty, "\(device): a look is pending after the last event")
            // Starts just after the last event, at and around every segment's end, and later.
            var starts = [table.after + 0.000_001, table.after + 0.5, table.after + 1, table.after + 2, table.after + 61]
            for segment in table.segments { starts += [segment.through - 0.5, segment.through, segment.through + 0.000_001, segment.through + 0.5] }
            starts += [table.after + 3599, table.after + 3601, table.after + 7200, table.after + 86_400]
            for start in starts where start > table.after {
                for count in [1, 3, 10, 1000] {
                    let request = PredictionRequest(device: device, at: start, count: count)
                    let (kept, made) = try await served.plans(request)
                    if kept == nil, table.open, start > table.segments.last?.through ?? table.after {
                        // Past the looks the table keeps (a day of them): planned from the events.
                        #expect(start > table.after + PlanTable.coverage - 86_400, "\(device) from \(start)")
                        continue
                    }
                    #expect(kept == made, "\(device) from \(start), count \(count)")
                    compared += 1
                    if !made.isEmpty { nonEmpty += 1 }
                }
            }
        }
        #expect(compared > 14 * 40)
        #expect(nonEmpty > compared / 4, "the comparison covers real plans, not only empty ones (\(nonEmpty) of \(compared))")
    }

    @Test func aTableAnswersOnlyTheRequestItWasKeptFor() async throws {
        let served = try await Served()
        let device = "19_F"
        let table = try #require(try await served.table(device))
        let start = table.after + 2
        #expect(try await served.plans(PredictionRequest(device: device, at: start)).kept != nil)
        var notBefore = PredictionRequest(device: device, at: start)
        notBefore.notBefore = start
        #expect(try await served.plans(notBefore).kept != nil, "a notBefore at the start is no notBefore")
        notBefore.notBefore = start + 60
        var constrained = PredictionRequest(device: device, at: start)
        constrained.constraints = try FetchConstraints(json: Data(#"{"apps": {"*": {"network": "unmetered"}}}"#.utf8), file: "test.json")
        var apps = PredictionRequest(device: device, at: start)
        apps.apps = ["com.whatsapp"]
        for request in [
            PredictionRequest(device: device, at: table.after), PredictionRequest(device: device, at: table.after - 3600),
            PredictionRequest(device: device), PredictionRequest(device: device, app: "com.whatsapp", at: start),
            PredictionRequest(device: device, at: start, budget: 12), PredictionRequest(device: device, at: start, topApps: 3),
            notBefore, constrained, apps, PredictionRequest(device: "no such device", at: start),
        ] {
            #expect(try await served.reader().precomputedPlan(request) == nil, "\(request)")
        }
    }

    /// Days of the devices' habits (``HabitTrace``), chat at 08:4x.
    private static func habits(_ devices: [String], days: Range<Int>) -> [String] {
        HabitTrace.rows(devices: devices, days: days, chatTens: 4)
    }

    @Test func aTableStopsAnsweringWhenItsDeviceOrItsEpochMoves() async throws {
        let served = try await Served(rows: Self.habits(["a", "b", "c"], days: 0..<14))
        let at = Timestamp.parseArgument("2023-11-26T20:30:00+01:00")!
        func kept(_ device: String) async throws -> Bool {
            let (kept, made) = try await served.plans(PredictionRequest(device: device, at: at))
            if let kept { #expect(kept == made, "\(device)") }
            return kept != nil
        }
        /// How many of `devices` have a plan kept ahead.
        func keptCount(_ devices: String...) async throws -> Int {
            var count = 0
            for device in devices where try await kept(device) { count += 1 }
            return count
        }
        #expect(try await keptCount("a", "b", "c") == 3)

        // A launch of `a` ingested (not folded yet): `a`'s table is older than its events; the
        // others' still hold (the same epoch).
        try served.temporary.ingest(["2023-11-26T20:10:00+01:00,a,chat,launch,,,"], into: served.store)
        #expect(try await !kept("a"))
        #expect(try await keptCount("b", "c") == 2)
        try await served.fold()
        #expect(try await !kept("a"), "folding does not make it current")
        try await served.warm()
        #expect(try await kept("a"), "the next pass keeps it again")

        // A publish to every device concerns every device.
        try served.temporary.ingest(["2023-11-26T20:15:00+01:00,,news,publish,,,"], into: served.store)
        #expect(try await keptCount("a", "b", "c") == 0)
        try await served.fold()
        try await served.warm()
        #expect(try await keptCount("a", "b", "c") == 3)

        // Two more weeks of `c` start a new prior epoch: every table is of the old one.
        try served.temporary.ingest(Self.habits(["c"], days: 14..<28), into: served.store)
        try await served.fold()
        let later = PredictionRequest(device: "b", at: at)
        #expect(try await served.reader().precomputedPlan(later) == nil)
        try await served.warm()
        #expect(try await keptCount("a", "b") == 2)
    }

    @Test func aPassThatCannotKeepADevicesTableDropsIt() async throws {
        let served = try await Served(rows: Self.habits(["a", "b"], days: 0..<14))
        let at = Timestamp.parseArgument("2023-11-26T20:30:00+01:00")!
        #expect(try await served.reader().precomputedPlan(PredictionRequest(device: "a", at: at)) != nil)
        try served.temporary.ingest(["2023-11-26T20:10:00+01:00,a,chat,launch,,,"], into: served.store)
        try await served.fold()
        // A complete pass that keeps no tables (another request's) still looks at `a`: its old
        // table must go, since the pass's marker now vouches for every table older than it.
        let warmer = ModelRepository(store: served.store)
        warmer.savesFolds = false
        var other = PredictionRequest()
        other.budget = 12
        #expect(try await warmer.keepSchedulersCurrent(request: other).complete)
        #expect(try await served.reader().precomputedPlan(PredictionRequest(device: "a", at: at)) == nil)
        let b = try await served.plans(PredictionRequest(device: "b", at: at))
        #expect(b.kept != nil && b.kept == b.made, "b had no event: its table stands")
    }

    /// The warm-up saves with each table what an empty plan's note reads of the device's model
    /// (format 5): the facts of the model a reader has. A row of format 4 is read without them;
    /// a row cut short is no row.
    @Test func aTableKeepsWhatItsNoteReads() async throws {
        let served = try await Served()
        let reader = served.reader()
        let snapshot = try await reader.refresh()
        var checked = 0
        for (id, name) in snapshot.deviceNames {
            let row = try #require(try served.store.withModelState(key: reader.planTableKey(device: id)) { _, bytes in Array(bytes) })
            let parsed = try #require(row.withUnsafeBytes { ModelRepository.planTableRow($0).map { ($0.epoch, Array($0.table), $0.note) } })
            #expect(parsed.2 == snapshot.models[id].map(EmptyPlanNote.Facts.init), "\(name)")
            var w = BinaryWriter()
            w.int(4)
            w.uint64(UInt64(bitPattern: parsed.0.watermark))
            w.uint64(parsed.0.tag)
            w.blob(parsed.1)
            let old = w.bytes.withUnsafeBytes { ModelRepository.planTableRow($0).map { (Array($0.table), $0.note) } }
            #expect(old?.0 == parsed.1 && old?.1 == nil, "\(name)")
            #expect(row.dropLast().withUnsafeBytes { ModelRepository.planTableRow($0) } == nil)
            checked += 1
        }
        #expect(checked == 14)
    }

    @Test func aTableRoundTripsItsBytes() throws {
        let prediction = Prediction(
            device: "d", app: "com.é", fetchAt: "2023-11-26T20:30:00+01:00", fetchAtUnix: 1_701_027_000.25, launchProbability: 0.31,
            newDataProbability: 1, reason: "right after mail, d often opens chat within 30 min (p=0.31)")
        let table = PlanTable(after: 1_701_026_000.5, segments: [
            .init(through: 1_701_026_001.5, predictions: [prediction, prediction]), .init(through: 1_701_027_800, predictions: []),
        ])
        let bytes = table.binaryEncoded()
        #expect(try bytes.withUnsafeBytes { try PlanTable(binary: $0, device: "d") } == table)
        #expect(throws: PlanTable.Damaged.self) { try (bytes + [0]).withUnsafeBytes { try PlanTable(binary: $0, device: "d") } }
        #expect(throws: (any Error).self) { try bytes.dropLast().withUnsafeBytes { try PlanTable(binary: $0, device: "d") } }
        // Starts: not after the last event → nil; in a segment → its plan, cut at the horizon
        // and the count; after the last segment → nothing.
        #expect(table.predictions(from: table.after, count: 10) == nil)
        #expect(table.predictions(from: table.after + 0.25, count: 1) == [prediction])
        #expect(table.predictions(from: 1_701_026_001.5, count: 10) == [prediction, prediction])
        #expect(table.predictions(from: 1_701_026_002, count: 10) == [])
        #expect(table.predictions(from: 1_700_940_000.25 + 1, count: 10) == nil)
        #expect(table.predictions(from: 1_701_027_801, count: 10) == [])
        // A plan request decodes only its start's segment, and answers the same.
        for start in [table.after, table.after + 0.25, 1_701_026_001.5, 1_701_026_002, 1_701_027_800, 1_701_027_801] {
            for count in [1, 10] {
                #expect(try bytes.withUnsafeBytes { try PlanTable.predictions(binary: $0, device: "d", from: start, count: count) }
                    == table.predictions(from: start, count: count), "from \(start), count \(count)")
            }
        }
    }
}
