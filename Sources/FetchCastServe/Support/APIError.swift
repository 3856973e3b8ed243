import Foundation
import Hummingbird

/// Every error answer: a status and a JSON body `{"error": "...", "line": L, "column": C}`
/// (`line` and `column` only for a bad request body).
public struct APIError: HTTPResponseError, Sendable {
    /// The HTTP status.
    public var status: HTTPResponse.Status
    /// A full sentence saying what to fix.
    public var message: String
    /// The body's line at fault (1-based), for a bad trace.
    public var line: Int?
    /// The column at fault (1-based), for a bad trace.
    public var column: Int?
    var headers: HTTPFields

    init(_ status: HTTPResponse.Status, _ message: String, line: Int? = nil, column: Int? = nil, headers: HTTPFields = [:]) {
        self.status = status
        self.message = message
        self.line = line
        self.column = column
        self.headers = headers
    }

    struct Body: Codable {
        var error: String
        var line: Int?
        var column: Int?
    }

    /// The JSON answer.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers = self.headers
        headers[.contentType] = "application/json; charset=utf-8"
        let data = try JSONEncoder.api.encode(Body(error: message, line: line, column: column))
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

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

extension JSONEncoder {
    /// Sorted keys, unescaped slashes: the encoding `fetchcast predict --format json` uses.
    static var api: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
