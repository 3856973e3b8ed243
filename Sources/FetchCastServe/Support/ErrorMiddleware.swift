import FetchCastStore
import Hummingbird
import NIOCore
import NIOHTTP1

/// Answers every error as an ``APIError``, so that every error answer has the same JSON shape:
/// Hummingbird's own keep their status (an unknown route: 404; a route that exists with other
/// methods: 405 with `Allow`), a body that breaks HTTP's framing (a malformed chunk) is a 400,
/// a client that hung up is counted as 499 (nothing can be sent), a store whose database is away
/// is a 503 with `Retry-After` (``StoreError/isUnavailable``), anything else is a 500 whose
/// details go to the log, not to the client. It returns the error as a response rather than
/// rethrowing, so that the metrics middleware around it times error answers too.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The routes, to tell a wrong method (405) from an unknown path (404).
    let routes: RouteTable

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let answer: APIError
        do {
            return try await next(request, context)
        } catch let error as APIError {
            answer = error
        } catch let error as HTTPError where error.status == .notFound && error.body == nil {
            let allowed = routes.methods(matching: request.uri.path)
            if allowed.isEmpty {
                answer = APIError(.notFound, "no such route: \(request.method) \(request.uri.path)")
            } else {
                let allow = allowed.joined(separator: ", ")
                answer = APIError(.methodNotAllowed, "\(request.uri.path) answers \(allow), not \(request.method)", headers: [.allow: allow])
            }
        } catch let error as HTTPError {
            answer = APIError(error.status, error.body ?? error.status.reasonPhrase, headers: error.headers)
        } catch let error as any HTTPResponseError {
            answer = APIError(error.status, error.status.reasonPhrase)
        } catch let error where Self.isHangUp(error) {
            // The client went away: no answer reaches it; counted apart from server failures.
            answer = APIError(.clientClosedRequest, "the client closed the connection")
        } catch let error as StoreError where error.isUnavailable {
            // The database is away (or dropped the connection under this request): nothing is
            // wrong with the request, and nothing of it was stored; the same one may succeed soon.
            context.logger.warning("the store's database is unavailable", metadata: ["error": "\(error)"])
            answer = APIError(
                .serviceUnavailable, "the store's database cannot be reached just now (nothing of this request was stored); try again",
                headers: [.retryAfter: "1"])
        } catch let error as HTTPParserError {
            answer = APIError(.badRequest, "the request is not valid HTTP/1.1 (\(error)); check its framing (Content-Length or chunked encoding)",
                              headers: [.connection: "close"])
        } catch {
            context.logger.error("request failed", metadata: ["error": "\(error)"])
            answer = APIError(.internalServerError, "the server failed to answer; see its log")
        }
        let response = try answer.response(from: request, context: context)
        // An answer to HEAD has no body (the router strips only what GET routes answer).
        return request.method == .head ? response.createHeadResponse() : response
    }

    /// Whether `error` says the connection closed under the request (the client hung up): the
    /// body ended before its `Content-Length` or last chunk, or the channel is closed.
    static func isHangUp(_ error: any Error) -> Bool {
        if error is CancellationError { return true }
        if let error = error as? HTTPParserError { return error == .invalidEOFState }
        if let error = error as? ChannelError {
            switch error {
            case .ioOnClosedChannel, .alreadyClosed, .eof, .outputClosed, .inputClosed: return true
            default: return false
            }
        }
        return false
    }
}
