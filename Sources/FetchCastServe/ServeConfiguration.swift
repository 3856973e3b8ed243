import FetchCastCore
import FetchCastStore
import FetchCastTrace
import Foundation
import Hummingbird

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
    /// The largest request body, in bytes as sent (gzip counts compressed; `413` beyond).
    public var maxBody: Int = 64 << 20
    /// The most bytes a request body may hold once decompressed (`413` beyond).
    public var maxDecodedBody: Int64 = 256 << 20
    /// The most rows a request body may hold (`413` beyond).
    public var maxEvents: Int64 = 1_000_000
    /// A connection with no request in flight and no bytes for this long is closed.
    public var idleTimeout: Duration = .seconds(60)
    /// The most devices `GET /v1/plans` plans from a time before their last event (each one's
    /// history is replayed: tens of milliseconds a device); a window in the past of more
    /// devices is a `400` saying how to ask.
    public var maxPastPlanDevices: Int64 = 256
    /// How long a read (a plan, a model, a page of devices, a batch of a sweep) may take from
    /// its arrival, waiting for a reader thread included. One that waited longer is not run;
    /// one still running then is stopped at its next check (every few thousand events it
    /// reads). Both are answered `503` with `Retry-After`: its client has likely given up, and
    /// going on would only make the requests behind it wait longer.
    public var requestDeadline: Duration = .seconds(10)
    /// Threads that plan at once (each with its own SQLite reader).
    public var readThreads: Int = 2
    /// Where request bodies are spooled before ingest: beside the store (the same disk, and
    /// cleaned at start of the spools a killed server left, see ``BodySpool``).
    public var spoolDirectory: String
    /// Whether every device's caught-up scheduler is kept saved in the store in the background
    /// (first plans then restore one row instead of replaying a history; the store grows by
    /// a saved scheduler per device).
    public var warmsSchedulers = true
    /// The clock (Unix seconds): plans without `at` start here.
    public var now: @Sendable () -> Double = WallClock.now
    /// How the service opens the store when it is not the SQLite file `databasePath` (a
    /// PostgreSQL database); `nil`: that file.
    package var storage: ServiceStorage?
    /// Whether bodies are spooled in a directory of this server's own made in `spoolDirectory`
    /// (``PrivateSpoolDirectory``): for a store that is no file to spool beside, where several
    /// servers of one database may share a machine.
    package var spoolsInPrivateDirectory = false

    /// Creates a configuration with the defaults of `fetchcast serve` for the SQLite store at
    /// `databasePath`.
    public init(databasePath: String) {
        self.databasePath = databasePath
        spoolDirectory = Self.directory(of: databasePath)
    }

    /// Creates a configuration with the defaults of `fetchcast serve --db` for the store at
    /// `location`, on either engine. An SQLite store's request bodies are spooled beside it. A
    /// PostgreSQL database's server spools them in a directory of its own, made under
    /// `spoolDirectory` (the system's temporary directory unless set) when the application is
    /// built and removed when it is released; one a killed server left is removed by the next
    /// server that starts there. On PostgreSQL 16 read threads a core by default (2 on SQLite),
    /// sharing 2 connections a core; a read's round trips hold no thread.
    public init(store location: StoreLocation) {
        guard location.filePath == nil else {
            self.init(databasePath: location.description)
            return
        }
        // Spools are named after `databasePath`: the URL without its password.
        self.init(databasePath: location.description)
        spoolDirectory = TemporaryPath.directory
        spoolsInPrivateDirectory = true
        storage = location.storage
        storage?.maxReaders = 2 * ProcessInfo.processInfo.activeProcessorCount
        keepPlansInMemory(bytes: location.storage.plansInMemoryBytes)
    }

    /// Keeps about `bytes` of plans kept ahead in memory (PostgreSQL; 0: none), with the read
    /// threads that go with it: 16 a core with them, 2 a core without (the defaults measured
    /// when a read held its thread while it waited for the database; it no longer does).
    package mutating func keepPlansInMemory(bytes: Int) {
        storage?.plansInMemoryBytes = bytes
        readThreads = (bytes > 0 ? 16 : 2) * ProcessInfo.processInfo.activeProcessorCount
    }

    /// The directory holding `path` (`.` for a bare file name).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Whether `host` is a numeric loopback address, the one the server will bind: an IPv4
    /// address in 127.0.0.0/8 or the IPv6 `::1` (with or without brackets). Names, `localhost`
    /// included, are not: what a name resolves to is not known here (`127.evil.example` is a
    /// name anyone may point anywhere).
    public static func isLoopback(_ host: String) -> Bool {
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 {
            return UInt32(bigEndian: v4.s_addr) >> 24 == 127
        }
        var bare = Substring(host)
        if bare.hasPrefix("["), bare.hasSuffix("]") { bare = bare.dropFirst().dropLast() }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, String(bare), &v6) == 1 else { return false }
        var loopback = in6_addr()
        _ = inet_pton(AF_INET6, "::1", &loopback)
        return withUnsafeBytes(of: v6) { a in withUnsafeBytes(of: loopback) { b in a.elementsEqual(b) } }
    }
}
