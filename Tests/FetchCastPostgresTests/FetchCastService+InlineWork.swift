import FetchCastCore
import FetchCastPredict
import FetchCastServe

/// The service's plans as the library asks them in process: the store's work in the asking task
/// (``InlineWork``).
extension FetchCastService {
    func plan(_ request: PredictionRequest) async throws -> [Prediction] {
        try await plan(request, on: InlineWork())
    }

    func planWithNote(_ request: PredictionRequest) async throws -> (fetches: [Prediction], note: String?) {
        try await planWithNote(request, on: InlineWork())
    }

    func preloadPlans() async throws -> Int {
        try await preloadPlans(on: InlineWork())
    }
}

extension FetchCastService.PlanSweep {
    func next() async throws -> [Prediction]? {
        try await next(on: InlineWork())
    }
}
