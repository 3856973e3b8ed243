import Logging
import ServiceLifecycle

/// Runs the service until SIGTERM or SIGINT, then stops it: graceful first, bounded.
public enum ServeRunner {
    /// Runs `app` until SIGTERM or SIGINT. The server then stops accepting connections and lets
    /// the requests in flight finish for up to `shutdownGrace`; past it, what is still running
    /// (a slow upload trickling its body, a long sweep) is cancelled, its spooled body removed
    /// and nothing of it stored, and the process goes on stopping (at most 5 s more for the
    /// cancelled work to end). Before, one client trickling a 21 MB body held a SIGTERM for as
    /// long as it trickled. Background work no request waits for (a fold, a warm-up pass) gets
    /// 2 s, then is left to the process's exit (``BlockingPools``, ``SchedulerWarmup``).
    /// - Parameters:
    ///   - app: The application ``buildApplication(configuration:onRunning:)`` made.
    ///   - shutdownGrace: How long requests in flight may take after the signal.
    ///   - logger: Where the group says what it does.
    public static func run(_ app: some Service, shutdownGrace: Duration, logger: Logger) async throws {
        var configuration = ServiceGroupConfiguration(services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        configuration.maximumGracefulShutdownDuration = shutdownGrace
        configuration.maximumCancellationDuration = .seconds(5)
        try await ServiceGroup(configuration: configuration).run()
    }
}
