import FetchCastCore
import FetchCastModel
import FetchCastPostgres
@testable import FetchCastPredict
import FetchCastServe
import FetchCastStore
import FetchCastTestSupport
import Testing

/// Where a served plan comes from (the store's plans kept ahead, the plans kept in memory after
/// a check of the database, caught-up schedulers, decoded models, or planned afresh) never shows
/// in the plan: under random interleavings of ingests through two services on one store (two
/// processes on one database), folds or none, warm-ups, forgotten files and restarts, every plan
/// a service answers equals the plan of a new repository without caches, reading the store at
/// that moment by the readers' rule (``FetchCastService``: a device's events not yet folded are
/// folded in memory, with the prior of the last saved fold), and an empty plan asked with its
/// note has that repository's note. A sweep of every device (``FetchCastService/PlanSweep``),
/// asked now and then from a plan's start, answers each device's plan from that repository too.
struct PlanSourcesPropertyTests {
    static let devices = ["d0", "d1", "d2", "d3"]
    static let day0 = 1_699_833_600  // 2023-11-13T00:00:00Z, a Monday
    static let days = 16
    /// The services' clock: after every day of the trace.
    static let now = Double(day0 + (days + 2) * 86_400)

    /// One CSV file per day of the trace (every device's launches that day), and a late file
    /// per device holding launches of earlier days: mail near 08:00 on weekdays, news near
    /// 12:30, chat at random waking times.
    static func files(seed: UInt64) -> [(name: String, text: String)] {
        var random = SplitMix64(seed: seed)
        var perDay: [[String]] = Array(repeating: [], count: days)
        var late: [String: [String]] = [:]
        for day in 0..<days {
            let start = day0 + day * 86_400
            let weekday = day % 7 < 5
            for (i, device) in devices.enumerated() {
                var rows: [(Int, String)] = []
                if weekday || i == 0 { rows.append((start + 8 * 3600 + Int.random(in: -600...600, using: &random), "mail")) }
                if Int.random(in: 0..<4, using: &random) > 0 { rows.append((start + 12 * 3600 + 1800 + Int.random(in: -900...900, using: &random), "news")) }
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    rows.append((start + Int.random(in: (9 * 3600)...(22 * 3600), using: &random), "chat"))
                }
                for (t, app) in rows.sorted(by: { $0.0 < $1.0 }) {
                    // About one launch in ten arrives late, in a file of its own.
                    if Int.random(in: 0..<10, using: &random) == 0 {
                        late[device, default: []].append("\(t),\(device),\(app),launch")
                    } else {
                        perDay[day].append("\(t),\(device),\(app),launch")
                    }
                }
            }
        }
        let header = "time,device,app,event\n"
        var out = perDay.enumerated().map { ("day-\($0.offset)", header + $0.element.joined(separator: "\n") + "\n") }
        for device in devices where late[device] != nil {
            out.append(("late-\(device)", header + late[device]!.joined(separator: "\n") + "\n"))
        }
        return out
    }

    /// A plan served that is not the store's, with the steps before it.
    struct Mismatch: Sendable, CustomStringConvertible {
        var steps: [String]
        var served: [Prediction]
        var fresh: [Prediction]
        /// The notes served and fresh, when they differ.
        var notes: (served: String?, fresh: String?)?
        var description: String {
            if let notes { return "after \(steps.joined(separator: "; ")):\nnote served \(notes.served ?? "none")\nnote fresh  \(notes.fresh ?? "none")" }
            let first = zip(served, fresh).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(served.count, fresh.count)
            func shown(_ plan: [Prediction]) -> String {
                first < plan.count ? "\(plan[first].app)@\(plan[first].fetchAt) p=\(plan[first].launchProbability) \(plan[first].reason)" : "nothing"
            }
            return "after \(steps.joined(separator: "; ")):\nserved \(served.map { "\($0.app)@\($0.fetchAt)" })\n"
                + "fresh  \(fresh.map { "\($0.app)@\($0.fetchAt)" })\nfirst difference, fetch \(first): served \(shown(served)); fresh \(shown(fresh))"
        }
    }

    struct Outcome: Sendable {
        var asked = 0, nonEmpty = 0, noted = 0, answeredAhead = 0, fromMemory = 0, notedFromTables = 0, swept = 0
        var mismatches: [Mismatch] = []
    }

    /// The store under test: how its services, its fresh repository and a forget reach it.
    struct Target: Sendable {
        var log: LogUnderTest

        func service() async throws -> FetchCastService {
            switch log.engine {
            case .sqlite: return try await FetchCastService(path: log.location, now: { now })
            case .postgres:
                return try await FetchCastService(storage: PostgresModelStore.serviceStorage(try PostgresLocation(url: log.location)), now: { now })
            }
        }

        /// The plan of a repository without caches that does not save folds, as a reader, and
        /// `withNote`, when it is empty, its note: the cause the device's model before the
        /// plan's start gives (``EmptyPlanNote``).
        func freshPlan(_ request: PredictionRequest, withNote: Bool) async throws -> (fetches: [Prediction], note: String?) {
            let store: any ModelStore
            switch log.engine {
            case .sqlite: store = try Store(path: log.location, access: .read)
            case .postgres: store = try await PostgresModelStore.open(try PostgresLocation(url: log.location))
            }
            let repository = ModelRepository(modelStore: store)
            repository.savesFolds = false
            let device = request.device!, at = request.at!
            let planned = await Result(awaiting: { () async throws -> (fetches: [Prediction], note: String?) in
                let snapshot = try await repository.refresh(devices: [device])
                let plan = try await Predictor.predict(request, snapshot: snapshot)
                guard withNote, plan.isEmpty else { return (plan, nil) }
                var model: DeviceModel?
                if let id = snapshot.device(named: device) { model = try await snapshot.model(of: id, before: at) }
                return (plan, EmptyPlanNote.sentence(device: device, horizonHours: request.horizon / 3600, model: model, from: at, budget: request.budget))
            })
            await (store as? PostgresModelStore)?.close()
            return try planned.get()
        }

        func forget(_ name: String) async throws {
            let writer = try await log.open()
            _ = try await writer.forget(name)
            await writer.close()
        }
    }

    /// Runs `steps` random operations on two services over one store.
    static func run(_ target: Target, directory: TemporaryDirectory, seed: UInt64, steps: Int) async throws -> Outcome {
        var paths: [(name: String, path: String)] = []
        for file in files(seed: seed) { paths.append((file.name, try directory.write(file.name + ".csv", file.text))) }
        var random = SplitMix64(seed: seed ^ 0x9E37_79B9_7F4A_7C15)
        var sweeps = SplitMix64(seed: seed ^ 0x5157_EE95)
        var services = [try await target.service(), try await target.service()]
        let work = InlineWork()
        var ingested: [String] = []
        var next = 0
        var log: [String] = []
        var outcome = Outcome()
        func ingest(_ s: Int, folds: Bool) async throws {
            let (service, file) = (services[s], paths[next])
            _ = try await service.ingest(file: file.path, name: file.name)
            if folds { try await service.foldPending() }
            ingested.append(file.name)
            log.append("ingest \(file.name) via \(s)\(folds ? ", fold" : "")")
            next += 1
        }
        // Plans are asked once something is in the store.
        for _ in 0..<3 { try await ingest(0, folds: true) }
        for _ in 0..<steps {
            let s = Int.random(in: 0..<2, using: &random)
            let service = services[s]
            switch Int.random(in: 0..<12, using: &random) {
            case 0...1 where next < paths.count:
                try await ingest(s, folds: Bool.random(using: &random))
            case 2:
                try await service.foldPending()
                log.append("fold via \(s)")
            case 3:
                _ = try await service.keepSchedulersCurrent()
                _ = try await service.preloadPlans(on: work)
                log.append("warm \(s)")
            case 4 where ingested.count > 5 && Int.random(in: 0..<3, using: &random) == 0:
                let name = ingested.remove(at: Int.random(in: 0..<ingested.count, using: &random))
                try await target.forget(name)
                log.append("forget \(name)")
            case 5:
                services[s] = try await target.service()
                log.append("restart \(s)")
            default:
                let device = devices[Int.random(in: 0..<devices.count, using: &random)]
                let lastDay = ingested.compactMap { $0.hasPrefix("day-") ? Int($0.dropFirst(4)) : nil }.max() ?? 0
                var request = PredictionRequest()
                request.device = device
                // Within the last day ingested, or up to the evening after it.
                request.at = Double(day0 + lastDay * 86_400 + Int.random(in: (6 * 3600)...(40 * 3600), using: &random) / 60 * 60)
                let withNote = Bool.random(using: &random)
                let asked = request
                typealias Answer = (fetches: [Prediction], note: String?)
                // With its note, the plan is asked again nine days later too: the device silent.
                var later = asked
                later.at = asked.at! + 9 * 86_400
                let requests: [PredictionRequest] = withNote ? [asked, later] : [asked]
                for i in requests.indices {
                    let request = requests[i]
                    let served: Answer = withNote
                        ? try await service.planWithNote(request, on: work) : (try await service.plan(request, on: work), nil)
                    let fresh: Answer = try await target.freshPlan(request, withNote: withNote)
                    if i == 0 {
                        outcome.asked += 1
                        if !fresh.fetches.isEmpty { outcome.nonEmpty += 1 }
                    }
                    if withNote && fresh.fetches.isEmpty { outcome.noted += 1 }
                    if served.fetches != fresh.fetches || served.note != fresh.note {
                        outcome.mismatches.append(Mismatch(
                            steps: log + ["plan \(device) at \(Int(request.at!)) via \(s)"], served: served.fetches, fresh: fresh.fetches,
                            notes: served.note == fresh.note ? nil : (served.note, fresh.note)))
                    }
                }
                log.append("plan \(device) via \(s)")
                // A quarter of the time, a sweep of every device from the same start (batches of
                // two), from a generator of its own: the steps above stay those of the seed.
                if Int.random(in: 0..<4, using: &sweeps) == 0 {
                    let from = asked.at!, to = from + 86_400
                    let sweep = try await service.sweep(from: from, to: to, budget: PredictionRequest().budget, batchSize: 2)
                    var swept: [Prediction] = []
                    while let batch = try await sweep.next(on: work) { swept += batch }
                    var fresh: [Prediction] = []
                    for device in devices {
                        fresh += try await target.freshPlan(PredictionRequest(device: device, at: from, count: .max), withNote: false).fetches
                    }
                    fresh = fresh.filter { $0.fetchAtUnix < to }
                    outcome.swept += 1
                    if swept != fresh {
                        outcome.mismatches.append(Mismatch(steps: log + ["sweep from \(Int(from)) via \(s)"], served: swept, fresh: fresh))
                    }
                    log.append("sweep via \(s)")
                }
            }
        }
        outcome.answeredAhead = services.reduce(0) { $0 + $1.plansAnsweredAhead }
        outcome.fromMemory = services.reduce(0) { $0 + $1.plansInMemory.answered }
        outcome.notedFromTables = services.reduce(0) { $0 + $1.notesFromTables }
        return outcome
    }

    static let cases: [(Engine, UInt64)] = Engine.available.flatMap { engine in [2, 3, 4, 6].map { (engine, UInt64($0)) } }

    @Test(arguments: cases)
    func everyPlanServedIsTheStoresPlanAtThatMoment(engine: Engine, seed: UInt64) async throws {
        var outcome = Outcome()
        try await LogUnderTest.with(engine) { log, directory in
            outcome = try await Self.run(Target(log: log), directory: directory, seed: seed, steps: 80)
        }
        #expect(outcome.mismatches.isEmpty, "\(outcome.mismatches.count) of \(outcome.asked) plans differ; the first \(outcome.mismatches.first.map(String.init(describing:)) ?? "")")
        // It can fail: most plans asked hold fetches (a wrong cache shows in them), and seed 4's
        // run reaches the plans kept ahead (8 of its plans; 7 from memory on PostgreSQL).
        #expect(outcome.asked >= 20 && outcome.nonEmpty * 3 >= outcome.asked, "asked \(outcome.asked), \(outcome.nonEmpty) not empty")
        #expect(outcome.swept >= 2, "swept \(outcome.swept) times")
        if seed == 4 {
            #expect(outcome.answeredAhead > 0)
            if engine == .postgres { #expect(outcome.fromMemory > 0) }
        }
        print("\(engine) seed \(seed): \(outcome.asked) plans asked, \(outcome.swept) sweeps, \(outcome.nonEmpty) not empty, \(outcome.noted) empty with a note, \(outcome.answeredAhead) answered ahead (\(outcome.fromMemory) from memory, \(outcome.notedFromTables) noted from tables)")
    }
}
