import FetchCastCore
import FetchCastModel
import FetchCastPredict
import FetchCastStore
import FetchCastTrace
import Hummingbird

/// `GET /v1/devices`, `GET /v1/devices/{device}/plan`, `GET /v1/devices/{device}/model`.
struct DevicesController {
    typealias Context = ServeRequestContext
    let service: FetchCastService
    let pools: BlockingPools
    let now: @Sendable () -> Double
    /// One read per device at a time (``DeviceGate``).
    let gate = DeviceGate()

    func addRoutes(to group: RecordedGroup) {
        group.get("devices", use: list)
        group.get("devices/{device}/plan", use: plan)
        group.get("devices/{device}/model", use: model)
    }

    struct DeviceList: Codable {
        struct Device: Codable {
            var device: String
            var events: Int64
            var firstEvent: String
            var lastEvent: String

            enum CodingKeys: String, CodingKey {
                case device, events
                case firstEvent = "first_event"
                case lastEvent = "last_event"
            }
        }
        var devices: [Device]
        /// Pass as `after` for the next page; absent on the last page.
        var next: String?
    }

    /// One page of devices in id order, with event counts and first/last event times (UTC).
    @Sendable func list(request: Request, context: Context) async throws -> Response {
        let query = Query(request: request, now: now)
        let limit = try query.integer("limit", in: OptionRange(1...1000)) ?? 100
        let after = try query.text("after")
        let service = self.service
        let page = try await pools.read { try await service.devices(after: after, limit: limit + 1) }
        let devices = page.prefix(limit).map {
            DeviceList.Device(device: $0.device, events: $0.events,
                              firstEvent: Timestamp.format(micros: $0.firstMicros, utcOffsetSeconds: 0),
                              lastEvent: Timestamp.format(micros: $0.lastMicros, utcOffsetSeconds: 0))
        }
        return try JSONResponse.make(DeviceList(devices: Array(devices), next: page.count > limit ? devices.last?.device : nil))
    }

    /// The plan `fetchcast predict --device D --at T` prints, from `at` or the server's now.
    @Sendable func plan(request: Request, context: Context) async throws -> Response {
        let device = try Query.pathID("device", context: context)
        let query = Query(request: request, now: now)
        let at = try query.time("at") ?? now()
        var planRequest = PredictionRequest(
            device: device, app: try query.text("app"), at: at, notBefore: try query.time("not_before"),
            count: try query.integer("count", in: Limits.count) ?? 10, budget: try query.number("budget", in: Limits.budget) ?? 24)
        planRequest.horizon = (try query.number("horizon", in: Limits.horizonHours) ?? 24) * 3600
        if let kind = try query.choice("delivery", among: DeliveryOptions.Kind.allCases.map(\.rawValue)) {
            planRequest.delivery = DeliveryOptions(kind: DeliveryOptions.Kind(rawValue: kind)!)
        }
        let asked = planRequest
        let service = self.service
        // An empty plan says why, in the words of `predict`'s note.
        let (fetches, note) = try await gate.run(device) { try await Self.answer { try await service.planWithNote(asked, on: pools) } }
        return try JSONResponse.make(PlanDocument(device: device, atUnix: at, fetches: fetches, note: note))
    }

    /// What `fetchcast model --device D [--app A]` shows, as JSON.
    @Sendable func model(request: Request, context: Context) async throws -> Response {
        let device = try Query.pathID("device", context: context)
        let app = try Query(request: request, now: now).text("app")
        let service = self.service
        let document = try await gate.run(device) { try await Self.answer { try await pools.read { try await service.model(device: device, app: app) } } }
        return try JSONResponse.make(document)
    }

    /// Maps the service's errors to statuses: an unknown device or app is a `404`.
    static func answer<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as ServiceError {
            throw APIError(.notFound, error.description)
        }
    }
}
