import Hummingbird
import HummingbirdAuth

/// Recognises `Authorization: Bearer TOKEN` against the tokens file; with no tokens file
/// (`--insecure-no-auth`, loopback only) every request is an anonymous admin.
struct TokenAuthenticator: AuthenticatorMiddleware {
    typealias Context = ServeRequestContext
    let tokens: TokenTable?

    func authenticate(request: Request, context: Context) async throws -> TokenIdentity? {
        guard let tokens else { return TokenIdentity(name: "anonymous", scope: .admin) }
        guard let token = Self.bearerToken(request.headers[.authorization]) else { return nil }
        return tokens.identity(of: token)
    }

    /// The token of `Authorization: Bearer TOKEN`; the scheme is case-insensitive (RFC 9110
    /// §11.1: `bearer` and `BEARER` are `Bearer`), the token is taken as sent.
    static func bearerToken(_ authorization: String?) -> String? {
        guard let authorization, let space = authorization.firstIndex(of: " "),
              authorization[..<space].lowercased() == "bearer"
        else { return nil }
        let token = authorization[authorization.index(after: space)...].drop(while: { $0 == " " })
        return token.isEmpty ? nil : String(token)
    }
}

/// Lets a request through only with a token of the scope a route group needs: `401` without
/// a valid token, `403` with one that lacks the scope.
struct RequireScope: RouterMiddleware {
    typealias Context = ServeRequestContext
    let scope: Scope

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let identity = context.identity else {
            throw APIError(.unauthorized, "a valid bearer token is needed (Authorization: Bearer TOKEN)",
                           headers: [.wwwAuthenticate: "Bearer realm=\"fetchcast\""])
        }
        guard identity.scope.allows(scope) else {
            throw APIError(.forbidden, "the token '\(identity.name)' has scope \(identity.scope.rawValue); this route needs \(scope.rawValue)")
        }
        return try await next(request, context)
    }
}
