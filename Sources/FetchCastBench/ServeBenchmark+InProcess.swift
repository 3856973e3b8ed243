import FetchCastCore
import FetchCastPredict
import FetchCastServe
import FetchCastStore
import Foundation

/// The library in process: the reference the HTTP load is measured against.
extension ServeBenchmark {
    /// Plans `names` round robin (each at its `asks` instant) for `seconds` on `threads` threads,
    /// as a caller with that many threads of its own would: ``FetchCastService/plan(_:on:)``
    /// from four tasks a thread, its blocking parts on the server's pools with `threads` read
    /// threads (``BlockingPools``, so that every thread always has a plan to run), then the
    /// answer encoded as JSON. Plans per second, and how many were made.
    static func planInProcess(
        _ service: FetchCastService, names: [String], asks: [Double], threads: Int, seconds: Double
    ) async throws -> (perSecond: Double, planned: Int) {
        let pools = BlockingPools(readThreads: threads)
        let planned = await plan(tasks: 4 * threads, names: names, asks: asks, seconds: seconds) { device, at, encoder in
            let fetches = try await service.plan(PredictionRequest(device: device, at: at), on: pools)
            _ = try encoder.encode(PlanDocument(device: device, atUnix: at, fetches: fetches))
        }
        _ = await pools.stop()
        return planned
    }

    /// Plans `names` round robin (each at its `asks` instant) from `tasks` tasks for `seconds`,
    /// as the plan route does (``FetchCastService/planWithNote(_:on:)``, then encode the answer
    /// as JSON), the store's work in the asking tasks (``InlineWork``); plans per second.
    static func planInProcess(_ service: FetchCastService, names: [String], asks: [Double], tasks: Int, seconds: Double) async -> Double {
        let work = InlineWork()
        return await plan(tasks: tasks, names: names, asks: asks, seconds: seconds) { device, at, encoder in
            let (fetches, note) = try await service.planWithNote(PredictionRequest(device: device, at: at), on: work)
            _ = try encoder.encode(PlanDocument(device: device, atUnix: at, fetches: fetches, note: note))
        }.perSecond
    }

    /// Plans `names` round robin (each at its `asks` instant) from `tasks` tasks for `seconds`
    /// through a ``Planner`` of `location` (what a library user opens), answers encoded as the
    /// plan route encodes them; plans per second.
    static func planWithPlanner(_ location: StoreLocation, names: [String], asks: [Double], tasks: Int, seconds: Double) async throws -> Double {
        let planner = try await Planner(location: location)
        let planned = await plan(tasks: tasks, names: names, asks: asks, seconds: seconds) { device, at, encoder in
            let (fetches, note) = try await planner.planWithNote(PredictionRequest(device: device, at: at))
            _ = try encoder.encode(PlanDocument(device: device, atUnix: at, fetches: fetches, note: note))
        }.perSecond
        await planner.shutdown()
        return planned
    }

    /// Calls `ask` round robin over `names` from `tasks` tasks for `seconds` (a failed ask counts,
    /// as a failed request would be answered); plans per second, and how many were asked.
    private static func plan(
        tasks: Int, names: [String], asks: [Double], seconds: Double,
        _ ask: @escaping @Sendable (_ device: String, _ at: Double, _ encoder: JSONEncoder) async throws -> Void
    ) async -> (perSecond: Double, planned: Int) {
        do {
            let deadline = WallClock.monotonic() + seconds
            let started = WallClock.monotonic()
            let total = await withTaskGroup(of: Int.self) { group in
                for task in 0..<tasks {
                    group.addTask {
                        let encoder = serverEncoder()
                        var i = task * 7919, n = 0
                        while WallClock.monotonic() < deadline {
                            try? await ask(names[i % names.count], asks[i % names.count], encoder)
                            i += 1
                            n += 1
                        }
                        return n
                    }
                }
                return await group.reduce(0, +)
            }
            return (Double(total) / (WallClock.monotonic() - started), total)
        }
    }

    /// A JSON encoder that encodes as the server does.
    private static func serverEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
