// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "FetchCast",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "fetchcast", targets: ["fetchcast"]),
        .library(name: "FetchCastCore", targets: ["FetchCastCore"]),
        .library(name: "FetchCastTrace", targets: ["FetchCastTrace"]),
        .library(name: "FetchCastModel", targets: ["FetchCastModel"]),
        .library(name: "FetchCastStore", targets: ["FetchCastStore"]),
        .library(name: "FetchCastReplay", targets: ["FetchCastReplay"]),
        .library(name: "FetchCastPredict", targets: ["FetchCastPredict"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
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
        .target(name: "FetchCastTrace", dependencies: ["FetchCastCore", "CZlib"]),
        .target(name: "FetchCastModel", dependencies: ["FetchCastCore"]),
        .target(name: "FetchCastStore", dependencies: ["FetchCastTrace", "CSQLite"]),
        .target(name: "FetchCastReplay", dependencies: ["FetchCastTrace", "FetchCastModel", "FetchCastStore"]),
        .target(name: "FetchCastPredict", dependencies: ["FetchCastTrace", "FetchCastStore", "FetchCastModel"]),
        .target(name: "FetchCastBench", dependencies: ["FetchCastTrace", "FetchCastStore", "FetchCastModel", "FetchCastPredict"]),
        .executableTarget(
            name: "fetchcast",
            dependencies: [
                "FetchCastTrace", "FetchCastStore", "FetchCastModel", "FetchCastReplay", "FetchCastBench", "FetchCastPredict",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // What several test targets share: a seeded generator, temporary directories and stores.
        .target(name: "FetchCastTestSupport", dependencies: ["FetchCastTrace", "FetchCastStore"], path: "Tests/FetchCastTestSupport"),
        .testTarget(name: "FetchCastCoreTests", dependencies: ["FetchCastCore", "FetchCastTestSupport"]),
        .testTarget(name: "FetchCastTraceTests", dependencies: ["FetchCastTrace", "FetchCastTestSupport"]),
        .testTarget(name: "FetchCastStoreTests", dependencies: ["FetchCastStore", "FetchCastTrace", "FetchCastTestSupport"]),
        .testTarget(name: "FetchCastModelTests", dependencies: ["FetchCastModel", "FetchCastTrace", "FetchCastTestSupport"]),
        .testTarget(name: "FetchCastPredictTests", dependencies: ["FetchCastPredict", "FetchCastStore", "FetchCastModel", "FetchCastTrace", "FetchCastTestSupport"]),
        .testTarget(name: "FetchCastReplayTests", dependencies: ["FetchCastReplay", "FetchCastTrace", "FetchCastModel", "FetchCastTestSupport"]),
        .testTarget(
            name: "FetchCastCLITests",
            dependencies: ["fetchcast", "FetchCastTrace", "FetchCastStore"],
            resources: [.copy("Fixtures")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
