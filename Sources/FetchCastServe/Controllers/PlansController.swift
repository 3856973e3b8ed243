import FetchCastPredict
import FetchCastTrace
import Foundation
import Hummingbird

/// `GET /v1/plans`: every planned fetch of every device in [from, to), as JSON Lines, written
/// a batch of 256 devices at a time (memory flat in the number of devices).
struct PlansController {
    typealias Context = ServeRequestContext
    let service: FetchCastService
    let pools: BlockingPools
    let now: @Sendable () -> Double

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
