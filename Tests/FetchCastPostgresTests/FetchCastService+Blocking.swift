import FetchCastCore
import FetchCastPredict
import FetchCastServe

/// The service's plans from a test's thread of its own (`offThread`), where a test asks many
/// in a row with blocking calls between them: each waited for on that thread, its blocking
/// parts on Dispatch's threads (``DispatchWork``), as the library runs them in process.
extension FetchCastService {
    func plan(_ request: PredictionRequest) throws -> [Prediction] {
        try Blocking.wait { try await self.plan(request, on: DispatchWork()) }
    }

    func planWithNote(_ request: PredictionRequest) throws -> (fetches: [Prediction], note: String?) {
        try Blocking.wait { try await self.planWithNote(request, on: DispatchWork()) }
    }

    func preloadPlans() throws -> Int {
        try Blocking.wait { try await self.preloadPlans(on: DispatchWork()) }
    }
}

extension FetchCastService.PlanSweep {
    func next() throws -> [Prediction]? {
        try Blocking.wait { try await self.next(on: DispatchWork()) }
    }
}
