import FetchCastStore
import Hummingbird

/// What `fetchcast serve` was asked for.
public struct ServeConfiguration: Sendable {
    /// The store file.
    public var databasePath: String
    /// The address to listen on.
    public var host: String = "127.0.0.1"
    /// The port; 0 picks a free one (see ``buildApplication(configuration:onRunning:)``'s callback).
    public var port: Int = 8080
    /// The bearer tokens; `nil` serves without authentication (only with `--insecure-no-auth`
    /// on a loopback address: the CLI checks).
    public var tokens: TokenTable?
    /// The largest request body, in bytes (`413` beyond).
    public var maxBody: Int = 64 << 20
    /// A connection with no request in flight and no bytes for this long is closed.
    public var idleTimeout: Duration = .seconds(60)
    /// Threads that plan at once (each with its own SQLite reader).
    public var readThreads: Int = 2
    /// Where request bodies are spooled before ingest.
    public var spoolDirectory: String = "/tmp"
    /// Whether every device's caught-up scheduler is kept saved in the store in the background
    /// (first plans then restore one row instead of replaying a history; the store grows by
    /// a saved scheduler per device).
    public var warmsSchedulers = true
    /// The clock (Unix seconds): plans without `at` start here.
    public var now: @Sendable () -> Double = WallClock.now

    /// Creates a configuration with the defaults of `fetchcast serve`.
    public init(databasePath: String) {
        self.databasePath = databasePath
    }

    /// Whether `host` is a loopback address (127.0.0.0/8, ::1, localhost).
    public static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }
}
