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
}
