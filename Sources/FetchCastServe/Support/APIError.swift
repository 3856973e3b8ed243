import Foundation
import Hummingbird

/// Every error answer: a status and a JSON body `{"error": "...", "line": L, "column": C}`
/// (`line` and `column` only for a bad request body).
struct APIError: HTTPResponseError, Sendable {
    /// The HTTP status.
    var status: HTTPResponse.Status
    /// A full sentence saying what to fix.
    var message: String
    /// The body's line at fault (1-based), for a bad trace.
    var line: Int?
    /// The column at fault (1-based), for a bad trace.
    var column: Int?
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
    func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers = self.headers
        headers[.contentType] = "application/json; charset=utf-8"
        let data = try JSONEncoder.api.encode(Body(error: message, line: line, column: column))
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

extension HTTPResponse.Status {
    /// `507`: the server's disk is full (RFC 4918), so the request could not be stored.
    static let insufficientStorage = HTTPResponse.Status(code: 507, reasonPhrase: "Insufficient Storage")
    /// `499` (nginx's): the client closed the connection before the answer; only counted in
    /// `/metrics`, never sent.
    static let clientClosedRequest = HTTPResponse.Status(code: 499, reasonPhrase: "Client Closed Request")
}
