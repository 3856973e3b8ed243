import Hummingbird

/// Answers every error as an ``APIError``, so that every error answer has the same JSON shape:
/// Hummingbird's own (unknown route: 404) keep their status, anything else is a 500 whose
/// details go to the log, not to the client. It returns the error as a response rather than
/// rethrowing, so that the metrics middleware around it times error answers too.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let answer: APIError
        do {
            return try await next(request, context)
        } catch let error as APIError {
            answer = error
        } catch let error as HTTPError {
            answer = APIError(
                error.status, error.body ?? (error.status == .notFound ? "no such route: \(request.method) \(request.uri.path)" : error.status.reasonPhrase),
                headers: error.headers)
        } catch let error as any HTTPResponseError {
            answer = APIError(error.status, error.status.reasonPhrase)
        } catch {
            context.logger.error("request failed", metadata: ["error": "\(error)"])
            answer = APIError(.internalServerError, "the server failed to answer; see its log")
        }
        return try answer.response(from: request, context: context)
    }
}
