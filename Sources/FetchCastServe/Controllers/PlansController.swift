import FetchCastPredict
import FetchCastTrace
import Foundation
import Hummingbird

/// `GET /v1/plans`: every planned fetch of every device in [from, to), as JSON Lines, written
/// a batch of 256 devices at a time (memory flat in the number of devices).
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
        let service = self.service
        let pools = self.pools
        let past = try await pools.read { try service.devicesWithEvents(after: from) }
        if past > maxPastDevices {
            throw APIError(
                .badRequest,
                "from is before the last events of \(past) devices: planning the past replays each one's history (tens of ms a device), "
                    + "so /v1/plans does it for at most \(maxPastDevices) devices; ask for a window that starts after the devices' last "
                    + "events (from=now, the default), or ask GET /v1/devices/{device}/plan?at=FROM for the devices you need")
        }
        let sweep = try await pools.read { try service.sweep(from: from, to: to, budget: budget) }
        return Response(status: .ok, headers: [.contentType: "application/x-ndjson"], body: ResponseBody { writer in
            let encoder = JSONEncoder.api
            while let batch = try await pools.read({ try sweep.next() }) {
                var buffer = ByteBuffer()
                for prediction in batch {
                    buffer.writeBytes(try encoder.encode(prediction))
                    buffer.writeInteger(UInt8(ascii: "\n"))
                }
                if buffer.readableBytes > 0 { try await writer.write(buffer) }
            }
            try await writer.finish(nil)
        })
    }
}
