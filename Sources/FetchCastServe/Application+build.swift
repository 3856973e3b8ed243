import FetchCastPredict
import Hummingbird
import HummingbirdCore
import HummingbirdAuth
import Logging
import Metrics
import NIOCore
import Prometheus

/// The Prometheus registry behind `/metrics`; the first use bootstraps swift-metrics with it
/// (swift-metrics has one backend a process), with latency buckets from 0.25 ms to 10 s.
public enum ServeMetrics {
    /// The process's registry.
    public static let registry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
            .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
            .seconds(2.5), .seconds(10),
        ]
        MetricsSystem.bootstrap(factory)
        return registry
    }()
}

/// The HTTP service: router, middleware (logging, metrics, JSON errors, bearer tokens) and
/// the services it runs (the server, the blocking thread pools).
///
/// - Parameters:
///   - configuration: Address, store, tokens and limits.
///   - logger: Where request logs go (never a token or a body).
///   - onRunning: Called with the port once the server listens (the real one for port 0).
/// - Returns: The application and the routes it registered.
/// - Throws: ``StoreError`` when the store cannot be opened.
public func buildApplication(
    configuration: ServeConfiguration, logger: Logger = Logger(label: "fetchcast.serve"),
    onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
) async throws -> (application: some ApplicationProtocol, routes: RouteTable) {
    let service = try await FetchCastService(storage: configuration.storage ?? .sqlite(path: configuration.databasePath), now: configuration.now)
    let pools = BlockingPools(readThreads: configuration.readThreads, deadline: configuration.requestDeadline)
    let registry = ServeMetrics.registry
    let table = RouteTable()

    // Bodies in a directory of this server's own (PostgreSQL): those of servers that were killed
    // go first. Released with the application (the events route holds it).
    var spoolDirectory = configuration.spoolDirectory
    var privateSpool: PrivateSpoolDirectory?
    if configuration.spoolsInPrivateDirectory {
        PrivateSpoolDirectory.removeAbandoned(in: configuration.spoolDirectory)
        privateSpool = try PrivateSpoolDirectory.create(in: configuration.spoolDirectory)
        spoolDirectory = privateSpool!.path
    }
    // A server killed during a POST left its spool: nothing will read it.
    BodySpool.removeStale(directory: spoolDirectory, store: configuration.databasePath)

    // HEAD is answered like GET, without the body (health checks use it).
    let router = Router(context: ServeRequestContext.self, options: .autoGenerateHeadEndpoints)
    router.add(middleware: LogRequestsMiddleware(.debug))
    router.add(middleware: MetricsMiddleware())
    router.add(middleware: ErrorMiddleware(routes: table))
    router.add(middleware: TokenAuthenticator(tokens: configuration.tokens))

    let operations = OperationsController(
        service: service, pools: pools, registry: registry,
        storeBytes: registry.makeGauge(descriptor: MetricNameDescriptor(
            namespace: "fetchcast", metricName: "store", unitName: "bytes", helpText: "Bytes of the store file and its write-ahead log")),
        plansAhead: ScrapedCount(registry.makeCounter(descriptor: MetricNameDescriptor(
            namespace: "fetchcast", metricName: "plans_answered_ahead", unitName: "total",
            helpText: "Plans answered from the plans the warm-up kept ahead for their device (the others were made from its scheduler)"))),
        plansFromMemory: ScrapedCount(registry.makeCounter(descriptor: MetricNameDescriptor(
            namespace: "fetchcast", metricName: "plans_from_memory", unitName: "total",
            helpText: "Of the plans answered ahead, those answered from the tables this process keeps in memory (PostgreSQL)"))),
        planChecks: ScrapedCount(registry.makeCounter(descriptor: MetricNameDescriptor(
            namespace: "fetchcast", metricName: "plan_checks", unitName: "total",
            helpText: "Checks of the database for new events that plans answered from memory waited for (one each, shared by every plan asked meanwhile)"))))
    operations.addOpenRoutes(to: RecordedGroup(group: router.group(), prefix: "", table: table))
    operations.addRoutes(to: RecordedGroup(group: router.group().add(middleware: RequireScope(scope: .read)), prefix: "", table: table))

    let v1Read = RecordedGroup(group: router.group("v1").add(middleware: RequireScope(scope: .read)), prefix: "/v1", table: table)
    DevicesController(service: service, pools: pools, now: configuration.now).addRoutes(to: v1Read)
    PlansController(service: service, pools: pools, now: configuration.now, maxPastDevices: configuration.maxPastPlanDevices)
        .addRoutes(to: v1Read)

    let warmup = SchedulerWarmup(
        service: service, work: pools, enabled: configuration.warmsSchedulers,
        saved: registry.makeCounter(descriptor: MetricNameDescriptor(
            namespace: "fetchcast", metricName: "schedulers_saved", unitName: "total",
            helpText: "Caught-up schedulers the background warm-up saved to the store")),
        preloaded: registry.makeCounter(descriptor: MetricNameDescriptor(
            namespace: "fetchcast", metricName: "plans_preloaded", unitName: "total",
            helpText: "Plans kept ahead loaded into this process's memory after a complete warm-up, before their devices asked (PostgreSQL)")),
        logger: logger)
    let v1Ingest = RecordedGroup(group: router.group("v1").add(middleware: RequireScope(scope: .ingest)), prefix: "/v1", table: table)
    EventsController(
        service: service, pools: pools, maxBody: configuration.maxBody, maxDecodedBody: configuration.maxDecodedBody,
        maxEvents: configuration.maxEvents, spoolDirectory: spoolDirectory, privateSpool: privateSpool, store: configuration.databasePath,
        eventsIngested: registry.makeCounter(descriptor: MetricNameDescriptor(
            namespace: "fetchcast", metricName: "events_ingested", unitName: "total", helpText: "Events added by POST /v1/events")),
        folds: FoldScheduler(), warmup: warmup
    ).addRoutes(to: v1Ingest)

    var http1 = HTTP1Channel.Configuration(
        additionalChannelHandlers: connectionHandlers(maxBody: configuration.maxBody),
        idleTimeout: TimeAmount.nanoseconds(Int64(configuration.idleTimeout.components.seconds) * 1_000_000_000))
    // Heads are bounded (HeadLimits: a field or the URL 32 KiB, 48 KiB in all, 100 fields);
    // beyond, HeadTooLargeHandler answers 414 or 431.
    http1.httpDecoder = .init(maxHeaderFieldSize: HeadLimits.field, maxHeaderListSize: HeadLimits.total, maxHeaderFieldCount: HeadLimits.fields)
    let app = Application(
        router: router,
        server: .http1(configuration: http1),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "fetchcast"),
        services: [pools, warmup],
        onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? configuration.port) },
        logger: logger)
    return (app, table)
}

/// The handlers each connection gets after Hummingbird's HTTP/1.1 codec: `100 Continue`, the
/// head limits' JSON answers, and closing after HTTP/1.0 and `413` answers (sharing one
/// measure of the request line).
private func connectionHandlers(maxBody: Int) -> [any RemovableChannelHandler] {
    let sniffer = RequestLineSniffer()
    return [ExpectContinueHandler(maxBody: maxBody), HeadTooLargeHandler(sniffer: sniffer), ConnectionCloseHandler(sniffer: sniffer)]
}
