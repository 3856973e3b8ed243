import FetchCastPredict
import FetchCastStore
import FetchCastTrace
import Hummingbird
import Prometheus

/// `POST /v1/events`: a trace as `fetchcast ingest` reads it, one request = one transaction.
struct EventsController {
    typealias Context = ServeRequestContext
    let service: FetchCastService
    let pools: BlockingPools
    let maxBody: Int
    /// Limits on the body once decompressed: bytes and rows (`413` beyond).
    let maxDecodedBody: Int64
    let maxEvents: Int64
    let spoolDirectory: String
    /// The directory of this server's own that `spoolDirectory` is, when it is one: kept as long
    /// as the route is (``PrivateSpoolDirectory`` removes it when released).
    let privateSpool: PrivateSpoolDirectory?
    /// The store file (spools are named after it).
    let store: String
    let eventsIngested: Prometheus.Counter
    let folds: FoldScheduler
    let warmup: SchedulerWarmup

    func addRoutes(to group: RecordedGroup) {
        group.post("events", use: ingest)
    }

    /// Spools the body (at most `maxBody` bytes, else `413` and nothing stored) to a temporary
    /// file beside the store, then ingests it on the writer thread (at most `maxDecodedBody`
    /// bytes once decompressed and `maxEvents` rows, else `413` and nothing stored); answers
    /// only after the commit. A full disk is a `507`. Rows whose events the store already holds
    /// are skipped and counted (`duplicates` in the answer) unless `?duplicates=keep`.
    @Sendable func ingest(request: Request, context: Context) async throws -> Response {
        // Checked before the body is read: a bad value stores nothing.
        let keepDuplicates = try Query(request: request, now: { 0 }).choice("duplicates", among: ["skip", "keep"]) == "keep"
        if let encoding = request.headers[.contentEncoding], !["gzip", "identity", "x-gzip"].contains(encoding.lowercased()) {
            throw APIError(.unsupportedMediaType, "Content-Encoding \(encoding) is not supported (send gzip or plain bytes)")
        }
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > maxBody {
            throw APIError(.contentTooLarge, "the body has \(length) bytes, more than the server's --max-body of \(maxBody) bytes; split the trace")
        }
        let spoolDirectory = self.spoolDirectory, store = self.store
        let spool = try await pools.read { try BodySpool(directory: spoolDirectory, store: store) }
        defer { spool.remove() }
        var total = 0
        for try await buffer in request.body {
            total += buffer.readableBytes
            if total > maxBody {
                throw APIError(.contentTooLarge, "the body is longer than the server's --max-body of \(maxBody) bytes; split the trace")
            }
            try await pools.read { try buffer.withUnsafeReadableBytes { try spool.write($0) } }
        }
        let service = self.service
        let name = "POST /v1/events (\(context.identity?.name ?? "anonymous"))"
        let outcome: FetchCastService.IngestOutcome
        let trace = TraceOptions(maxDecodedBytes: maxDecodedBody, maxEvents: maxEvents)
        do {
            outcome = try await pools.write { try await service.ingest(file: spool.path, name: name, trace: trace, keepDuplicates: keepDuplicates) }
        } catch let error as TraceError {
            switch error.problem {
            case .decodedTooLarge(let limit):
                throw APIError(.contentTooLarge, "the body is longer than the server's --max-decoded-body of \(limit) bytes once decompressed; split the trace")
            case .tooManyEvents(let limit):
                throw APIError(.contentTooLarge, "the body holds more than the server's --max-events of \(limit) rows (blank lines count); split the trace", line: error.line)
            default:
                throw APIError(.badRequest, error.problem.message, line: error.line, column: error.column)
            }
        } catch let error as StoreError where error.isFull {
            throw APIError(.insufficientStorage, "the store's disk is full; nothing of this request was stored (try again once space is freed)")
        }
        eventsIngested.increment(by: Int64(outcome.events))
        if outcome.events > 0 {
            // Fold the new events soon, off this request's path and with the ingests that
            // follow within `folds.delay`, so that plans find the model current.
            // Then the changed devices' saved schedulers are caught up, in the background.
            let pools = self.pools, warmup = self.warmup
            folds.schedule {
                _ = try? await pools.write { try await service.foldPending() }
                warmup.schedule()
            }
        }
        return try JSONResponse.make(outcome)
    }
}
