import Dispatch
import FetchCastCore
import FetchCastPredict
import FetchCastServe
import Foundation
import Synchronization

/// The library in process: the reference the HTTP load is measured against.
extension ServeBenchmark {
    /// Plans `names` round robin (each at its `asks` instant) on `threads` threads for `seconds`,
    /// as the handler does (plan, then encode the answer as JSON); plans per second.
    static func planInProcess(_ service: FetchCastService, names: [String], asks: [Double], threads: Int, seconds: Double) throws -> Double {
        var planned = 0
        return try planInProcess(service, names: names, asks: asks, threads: threads, seconds: seconds, planned: &planned)
    }

    /// ``planInProcess(_:names:asks:threads:seconds:)``, with the number of plans made.
    static func planInProcess(
        _ service: FetchCastService, names: [String], asks: [Double], threads: Int, seconds: Double, planned: inout Int
    ) throws -> Double {
        let counts = Mutex([Int](repeating: 0, count: threads))
        let deadline = WallClock.monotonic() + seconds
        let started = WallClock.monotonic()
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            let encoder = serverEncoder()
            var i = thread * 7919, n = 0
            while WallClock.monotonic() < deadline {
                let (device, at) = (names[i % names.count], asks[i % names.count])
                if let fetches = try? service.plan(PredictionRequest(device: device, at: at)) {
                    _ = try? encoder.encode(PlanDocument(device: device, atUnix: at, fetches: fetches))
                }
                i += 1
                n += 1
            }
            counts.withLock { $0[thread] = n }
        }
        let total = counts.withLock { $0.reduce(0, +) }
        planned = total
        return Double(total) / (WallClock.monotonic() - started)
    }

    /// Plans `names` round robin (each at its `asks` instant) from `tasks` tasks for `seconds`,
    /// as the plan route does (``FetchCastService/planWithNote(_:on:)``, then encode the answer
    /// as JSON), with the blocking parts on threads as the server runs them (``BenchWork``);
    /// plans per second.
    static func planInProcess(_ service: FetchCastService, names: [String], asks: [Double], tasks: Int, seconds: Double) throws -> Double {
        let names = names, asks = asks
        return try Blocking.wait {
            let work = BenchWork()
            let deadline = WallClock.monotonic() + seconds
            let started = WallClock.monotonic()
            let total = await withTaskGroup(of: Int.self) { group in
                for task in 0..<tasks {
                    group.addTask {
                        let encoder = serverEncoder()
                        var i = task * 7919, n = 0
                        while WallClock.monotonic() < deadline {
                            let (device, at) = (names[i % names.count], asks[i % names.count])
                            if let (fetches, note) = try? await service.planWithNote(PredictionRequest(device: device, at: at), on: work) {
                                _ = try? encoder.encode(PlanDocument(device: device, atUnix: at, fetches: fetches, note: note))
                            }
                            i += 1
                            n += 1
                        }
                        return n
                    }
                }
                return await group.reduce(0, +)
            }
            return Double(total) / (WallClock.monotonic() - started)
        }
    }

    /// A JSON encoder that encodes as the server does.
    private static func serverEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
