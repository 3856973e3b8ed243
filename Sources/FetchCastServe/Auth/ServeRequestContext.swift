import Hummingbird
import HummingbirdAuth

/// The request context of every route: Hummingbird's core storage plus the token's identity.
struct ServeRequestContext: AuthRequestContext, RequestContext {
    /// Hummingbird's per-request storage (parameters, logger, endpoint path).
    var coreContext: CoreRequestContextStorage
    /// Who is asking, once ``TokenAuthenticator`` recognised the bearer token.
    var identity: TokenIdentity?

    /// Creates the context of a new request (no identity yet).
    init(source: Source) {
        coreContext = .init(source: source)
        identity = nil
    }
}
