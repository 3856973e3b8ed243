import Hummingbird
import Synchronization

/// The routes the application registered (method and path template), kept so that a test can
/// check that the OpenAPI document lists every one: Hummingbird's router does not list them.
public final class RouteTable: Sendable {
    private let entries = Mutex<[String]>([])

    /// `METHOD /path/{param}` for every route, in registration order.
    public var routes: [String] { entries.withLock { $0 } }

    func record(_ method: HTTPRequest.Method, _ path: String) {
        entries.withLock { $0.append("\(method.rawValue) \(path)") }
    }

    /// The methods of the routes whose template matches `path` (a `{param}` matches any one
    /// segment), `HEAD` after `GET` (the router answers it); empty for an unknown path.
    func methods(matching path: String) -> [String] {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        var methods: [String] = []
        for route in routes {
            guard let space = route.firstIndex(of: " ") else { continue }
            let template = route[route.index(after: space)...].split(separator: "/", omittingEmptySubsequences: false)
            guard template.count == segments.count,
                  zip(template, segments).allSatisfy({ t, s in t == s || (t.hasPrefix("{") && t.hasSuffix("}") && !s.isEmpty) })
            else { continue }
            let method = String(route[..<space])
            if !methods.contains(method) { methods.append(method) }
            if method == "GET" && !methods.contains("HEAD") { methods.append("HEAD") }
        }
        return methods
    }
}
