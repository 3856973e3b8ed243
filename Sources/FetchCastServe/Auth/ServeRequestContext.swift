import Hummingbird
import HummingbirdAuth

/// The request context of every route: Hummingbird's core storage plus the token's identity.
public struct ServeRequestContext: AuthRequestContext, RequestContext {
    /// Hummingbird's per-request storage (parameters, logger, endpoint path).
    public var coreContext: CoreRequestContextStorage
    /// Who is asking, once ``TokenAuthenticator`` recognised the bearer token.
    public var identity: TokenIdentity?

    /// Creates the context of a new request (no identity yet).
    public init(source: Source) {
        coreContext = .init(source: source)
        identity = nil
    }
}
