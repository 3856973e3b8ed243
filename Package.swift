// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "FetchCast",
    // Mutex (Synchronization) needs macOS 15 / iOS 18.
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .executable(name: "fetchcast", targets: ["fetchcast"]),
        .library(name: "FetchCastCore", targets: ["FetchCastCore"]),
        .library(name: "FetchCastTrace", targets: ["FetchCastTrace"]),
        .library(name: "FetchCastModel", targets: ["FetchCastModel"]),
        .library(name: "FetchCastStore", targets: ["FetchCastStore"]),
        .library(name: "FetchCastReplay", targets: ["FetchCastReplay"]),
        .library(name: "FetchCastPredict", targets: ["FetchCastPredict"]),
        .library(name: "FetchCastServe", targets: ["FetchCastServe"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // Without its default traits (as hummingbird-auth asks too): no swift-configuration to
        // build (its `ConfigReader` initialisers are unused here) and Foundation's essentials
        // only for URL-encoded forms (unused).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // Deque (the model's launches of the last τ; already in the graph through SwiftNIO).
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        // SHA-256 of every trace (already in the graph through Hummingbird's TLS stack).
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        // The PostgreSQL engine (FetchCastPostgres); brings swift-nio-ssl for sslmode=require.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite3"])]
        ),
        .systemLibrary(
            name: "CZlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        .target(name: "FetchCastCore"),
        .target(
            name: "FetchCastTrace",
            // No SystemPackage here: scripts/fuzz.sh compiles this module with swiftc alone.
            dependencies: ["FetchCastCore", "CZlib", .product(name: "Crypto", package: "swift-crypto")]),
        .target(name: "FetchCastModel", dependencies: ["FetchCastCore", .product(name: "DequeModule", package: "swift-collections")]),
        .target(name: "FetchCastStore", dependencies: ["FetchCastCore", "FetchCastTrace", "CSQLite"]),
        // The PostgreSQL engine behind FetchCastStore's event-log seam (issue 28).
        .target(
            name: "FetchCastPostgres",
            dependencies: [
                "FetchCastCore", "FetchCastTrace", "FetchCastStore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]),
        .target(
            name: "FetchCastReplay",
            dependencies: [
                "FetchCastCore", "FetchCastTrace", "FetchCastModel", "FetchCastStore", .product(name: "SystemPackage", package: "swift-system"),
            ]),
        .target(name: "FetchCastPredict", dependencies: ["FetchCastCore", "FetchCastTrace", "FetchCastStore", "FetchCastModel"]),
        // `fetchcast export`: the store's events, models and plans as CSV or JSON Lines, over FetchCastPredict's repository.
        .target(name: "FetchCastExport", dependencies: ["FetchCastCore", "FetchCastTrace", "FetchCastStore", "FetchCastModel", "FetchCastPredict"]),
        .target(name: "FetchCastBench", dependencies: ["FetchCastCore", "FetchCastTrace", "FetchCastStore", "FetchCastModel", "FetchCastPredict", "FetchCastPostgres", "FetchCastServe"]),
        // The service (`fetchcast serve`): `FetchCastService`, one long-running process's connections to the store (lent to a task at a time), its plans kept in memory and their checks, over FetchCastPredict's repository, and HTTP over it.
        .target(
            name: "FetchCastServe",
            dependencies: [
                "FetchCastCore", "FetchCastModel", "FetchCastPredict", "FetchCastStore", "FetchCastTrace",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdAuth", package: "hummingbird-auth"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            resources: [.embedInCode("Resources/openapi.json")]
        ),
        .executableTarget(
            name: "fetchcast",
            dependencies: [
                "FetchCastCore", "FetchCastTrace", "FetchCastStore", "FetchCastModel", "FetchCastReplay", "FetchCastBench",
                "FetchCastPredict", "FetchCastExport", "FetchCastServe", "FetchCastPostgres",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // What an app or SDK would write (docs/model.md, "Embedding the scheduler in an app"):
        // the model and planner only, no SQLite. Not part of the `fetchcast` product.
        .executableTarget(
            name: "EmbeddingExample",
            dependencies: ["FetchCastCore", "FetchCastModel"],
            path: "Examples/EmbeddingExample"
        ),
        // What several test targets share: a seeded generator, temporary directories and stores.
        .target(
            name: "FetchCastTestSupport",
            dependencies: [
                "FetchCastCore", "FetchCastTrace", "FetchCastStore", "FetchCastPostgres",
                .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/FetchCastTestSupport"),
        .testTarget(name: "FetchCastCoreTests", dependencies: ["FetchCastCore", "FetchCastTestSupport"]),
        .testTarget(name: "FetchCastTraceTests", dependencies: ["FetchCastCore", "FetchCastTrace", "FetchCastTestSupport"]),
        .testTarget(name: "FetchCastStoreTests", dependencies: ["FetchCastCore", "FetchCastStore", "FetchCastTrace", "FetchCastTestSupport"]),
        // The event-log conformance suite: every engine (SQLite always; PostgreSQL when
        // FETCHCAST_TEST_POSTGRES names a server) passes the same tests.
        .testTarget(
            name: "FetchCastPostgresTests",
            dependencies: [
                "FetchCastCore", "FetchCastStore", "FetchCastPostgres", "FetchCastPredict", "FetchCastExport", "FetchCastReplay", "FetchCastServe",
                "FetchCastTrace", "FetchCastTestSupport",
            ]),
        .testTarget(name: "FetchCastModelTests", dependencies: ["FetchCastCore", "FetchCastModel", "FetchCastTrace", "FetchCastTestSupport"]),
        .testTarget(name: "FetchCastPredictTests", dependencies: ["FetchCastCore", "FetchCastPredict", "FetchCastReplay", "FetchCastStore", "FetchCastModel", "FetchCastTrace", "FetchCastTestSupport"]),
        .testTarget(name: "FetchCastExportTests", dependencies: ["FetchCastCore", "FetchCastExport", "FetchCastPredict", "FetchCastStore", "FetchCastModel", "FetchCastTrace", "FetchCastTestSupport"]),
        .testTarget(name: "FetchCastReplayTests", dependencies: ["FetchCastCore", "FetchCastReplay", "FetchCastTrace", "FetchCastModel", "FetchCastTestSupport"]),
        .testTarget(
            name: "FetchCastServeTests",
            dependencies: [
                "FetchCastCore", "FetchCastServe", "FetchCastPredict", "FetchCastStore", "FetchCastTrace", "fetchcast", "FetchCastTestSupport",
                // Not HummingbirdTesting: its AsyncHTTPClient cost a clean test build about 95 s of
                // 834 on 2 cores (Support/TestHTTP.swift has the loopback client these tests use).
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "FetchCastCLITests",
            dependencies: ["fetchcast", "FetchCastCore", "FetchCastTrace", "FetchCastStore", "FetchCastPostgres", "FetchCastTestSupport"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(name: "EmbeddingExampleTests", dependencies: ["EmbeddingExample", "FetchCastModel", "FetchCastTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)

// The test targets compile unoptimised (`-Onone`) in the release build scripts/test.sh runs the
// suites with: the code under test stays optimised, while the tests' own code, mostly expanded
// `#expect` macros, took about twice as long to optimise as to compile (FetchCastCLITests alone:
// 88 s at -O, 44 s at -Onone, on 2 cores). Test targets are never built for a package that
// depends on this one, so the unsafe flag does not reach it.
for target in package.targets where target.type == .test {
    target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-Onone"])]
}
