import Hummingbird

/// A router group that records each route it adds in a ``RouteTable``.
struct RecordedGroup {
    typealias Context = ServeRequestContext
    typealias Handler = @Sendable (Request, Context) async throws -> Response
    let group: RouterGroup<Context>
    let prefix: String
    let table: RouteTable

    func get(_ path: String, use handler: @escaping Handler) {
        table.record(.get, prefix + "/" + path)
        group.get(RouterPath(path), use: handler)
    }

    func post(_ path: String, use handler: @escaping Handler) {
        table.record(.post, prefix + "/" + path)
        group.post(RouterPath(path), use: handler)
    }
}
