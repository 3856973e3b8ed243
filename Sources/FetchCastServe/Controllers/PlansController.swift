import FetchCastCore
import FetchCastModel
import FetchCastPredict
import FetchCastTrace
import HTTPTypes
import Foundation
import Hummingbird
import ServiceLifecycle

/// `GET /v1/plans`: every planned fetch of a page of devices in [from, to), as JSON Lines,
/// written a batch of 256 devices at a time (memory flat in the number of devices). A page
/// holds at most `limit` devices (default 10,000); when more follow, a `Link` header with
/// `rel="next"` gives the next page's URL (the same window, the resolved `from`).
///
/// A window that starts before more than `maxPastDevices` devices' last events is refused:
/// each such device's history would be replayed up to `from` (648 s for 10,014 devices).
struct PlansController {
    typealias Context = ServeRequestContext
    let service: FetchCastService
    let pools: BlockingPools
    let now: @Sendable () -> Double
    let maxPastDevices: Int64

    func addRoutes(to group: RecordedGroup) {
        group.get("plans", use: sweep)
    }

    @Sendable func sweep(request: Request, context: Context) async throws -> Response {
        let query = Query(request: request, now: now)
        let from = try query.time("from") ?? now()
        let to = try query.time("to") ?? from + 3600
        guard to > from, to - from <= 86_400 else {
            throw APIError(.badRequest, "to must be after from and at most 24 hours later (the planner's horizon)")
        }
        let budget = try query.number("budget", in: Limits.budget) ?? 24
        let limit = try query.integer("limit", in: Limits.planPageDevices) ?? Self.defaultPage
        let after = try query.text("after")
        let delivery = try query.choice("delivery", among: DeliveryOptions.Kind.allCases.map(\.rawValue))
            .flatMap(DeliveryOptions.Kind.init(rawValue:)) ?? .direct
        let service = self.service
        let pools = self.pools
        let past = try await pools.read { try await service.devicesWithEvents(after: from) }
        if past > maxPastDevices {
            throw APIError(
                .badRequest,
                "from is before the last events of \(past) devices: planning the past replays each one's history (tens of ms a device), "
                    + "so /v1/plans does it for at most \(maxPastDevices) devices; ask for a window that starts after the devices' last "
                    + "events (from=now, the default), or ask GET /v1/devices/{device}/plan?at=FROM for the devices you need")
        }
        let sweep = try await pools.read { try await service.sweep(
            from: from, to: to, budget: budget, delivery: DeliveryOptions(kind: delivery), after: after, limit: limit) }
        // The first batch is planned before the first byte is sent: a deadline or a database
        // error there is still a 503 (or 500) with a JSON body, not a cut stream.
        let first = try await sweep.next(on: pools)
        var headers: HTTPFields = [.contentType: "application/x-ndjson"]
        if let next = sweep.nextAfter {
            headers[HTTPField.Name("Link")!] = "<\(Self.page(from: from, to: to, budget: budget, delivery: delivery, limit: limit, after: next))>; rel=\"next\""
        }
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            let encoder = JSONEncoder.api
            // A client that went away fails a write (the loop ends there); a server that shuts
            // down ends the stream between batches. A later batch past the deadline (or a
            // failed read) ends the response without its last chunk: the client sees a cut body
            // (curl: exit 18) and asks again from the last device it got (`after=`).
            var pending = first
            while let batch = pending {
                pending = nil
                var buffer = ByteBuffer()
                for prediction in batch {
                    buffer.writeBytes(try encoder.encode(prediction))
                    buffer.writeInteger(UInt8(ascii: "\n"))
                }
                if buffer.readableBytes > 0 { try await writer.write(buffer) }
                guard !Task.isCancelled, !Task.isShuttingDownGracefully else { break }
                pending = try await sweep.next(on: pools)
            }
            try await writer.finish(nil)
        })
    }

    /// Devices a page holds when `limit` is not given.
    static let defaultPage = 10_000

    /// The URL of the page after `after`: the same window, `from` as Unix seconds (so `now`
    /// stays the instant the first page was asked about).
    static func page(from: Double, to: Double, budget: Double, delivery: DeliveryOptions.Kind = .direct, limit: Int, after: String) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&+=#;/?")
        let cursor = after.addingPercentEncoding(withAllowedCharacters: allowed) ?? after
        func number(_ x: Double) -> String { OptionRange<Double>.text(x) }
        let push = delivery == .direct ? "" : "&delivery=\(delivery.rawValue)"
        return "/v1/plans?from=\(number(from))&to=\(number(to))&budget=\(number(budget))\(push)&limit=\(limit)&after=\(cursor)"
    }
}
