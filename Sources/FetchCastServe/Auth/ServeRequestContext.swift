import Hummingbird
import HummingbirdAuth

/// The request context of every route: Hummingbird's core storage plus the token's identity.
public struct ServeRequestContext: AuthRequestContext, RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Who is asking, once ``TokenAuthenticator`` recognised the bearer token.
    public var identity: TokenIdentity?

    public init(source: Source) {
        coreContext = .init(source: source)
        identity = nil
    }
}
