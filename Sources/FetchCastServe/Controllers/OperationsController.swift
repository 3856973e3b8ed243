import FetchCastStore
import FetchCastPredict
import Hummingbird
import Prometheus
import Synchronization

/// `/healthz`, `/readyz`, `/metrics`, `/openapi.json`.
struct OperationsController {
    typealias Context = ServeRequestContext
    let service: FetchCastService
    let pools: BlockingPools
    let registry: PrometheusCollectorRegistry
    let storeBytes: Prometheus.Gauge
    /// Counts ``FetchCastService/plansAnsweredAhead``, brought up to date at each scrape.
    let plansAhead: ScrapedCount
    /// Of those, answered from the tables kept in memory; and the checks of the store they waited for.
    let plansFromMemory: ScrapedCount
    let planChecks: ScrapedCount

    /// Routes that need no token.
    func addOpenRoutes(to group: RecordedGroup) {
        group.get("healthz") { _, _ in try JSONResponse.make(["status": "ok"]) }
        group.get("readyz", use: ready)
        group.get("openapi.json") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
                     body: .init(byteBuffer: ByteBuffer(bytes: PackageResources.openapi_json)))
        }
    }

    /// Routes that need `read`.
    func addRoutes(to group: RecordedGroup) {
        group.get("metrics", use: metrics)
    }

    /// `200` when the store can be read now, else `503` (with `Retry-After` while its database
    /// is away: ready again as soon as it is back).
    @Sendable func ready(request: Request, context: Context) async throws -> Response {
        let service = self.service
        do {
            try await pools.read { try await service.checkReadable() }
        } catch let error as StoreError where error.isUnavailable {
            throw APIError(.serviceUnavailable, "the store cannot be read: \(error)", headers: [.retryAfter: "1"])
        } catch {
            throw APIError(.serviceUnavailable, "the store cannot be read: \(error)")
        }
        return try JSONResponse.make(["status": "ready"])
    }

    /// Prometheus text exposition.
    @Sendable func metrics(request: Request, context: Context) async throws -> Response {
        await storeBytes.set(service.storeBytes)
        plansAhead.update(to: service.plansAnsweredAhead)
        let memory = service.plansInMemory
        plansFromMemory.update(to: memory.answered)
        planChecks.update(to: memory.checks)
        return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                        body: .init(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
    }
}

/// A Prometheus counter of a count kept elsewhere, brought up to date when scraped.
final class ScrapedCount: Sendable {
    private let counter: Prometheus.Counter
    private let counted = Mutex(0)

    init(_ counter: Prometheus.Counter) { self.counter = counter }

    /// Adds what `total` grew by since the last update.
    func update(to total: Int) {
        counted.withLock { counted in
            counter.increment(by: Int64(max(0, total - counted)))
            counted = max(counted, total)
        }
    }
}
