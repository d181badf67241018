// swift-tools-version:6.0
import PackageDescription

// MARK: - Settings shared by every target

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// The libraries the server calls on every request (the core's rules, the store's writer) are compiled
/// for cross-module optimisation in release builds: their generic code (the writer over its ticket type,
/// the gateway over its request context) is then specialised where the server uses it, rather than run
/// through metadata look-ups and witness tables per request (bench/RESULTS.md, issue 24).
let librarySwiftSettings: [SwiftSetting] = swiftSettings + [
    .unsafeFlags(["-cross-module-optimization"], .when(configuration: .release)),
]

let package = Package(
    name: "linkout",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "linkout", targets: ["linkout"]),
        // For the stage benchmarks in bench/stages, which live in their own package: what they use must be
        // `public`. LinkOutServer is no product, so what the executable and the tests use of it is `package`.
        .library(name: "LinkOutCore", targets: ["LinkOutCore"]),
        .library(name: "LinkOutStore", targets: ["LinkOutStore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // Apple's notifications: their x5c chain is verified with swift-certificates (no hand-written X.509).
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.0.0"),
        // HMAC-SHA256 for the checkout's signed reference.
        .package(url: "https://github.com/apple/swift-crypto", from: "3.0.0"),
    ],
    targets: [
        // MARK: - C libraries, through the system's packages

        .systemLibrary(
            name: "CLibevent",
            pkgConfig: "libevent_core",
            providers: [.apt(["libevent-dev"]), .brew(["libevent"])]
        ),
        // MaxMind DB country lookups (GeoIPDatabase); only the server links it.
        .systemLibrary(
            name: "CLibmaxminddb",
            pkgConfig: "libmaxminddb",
            providers: [.apt(["libmaxminddb-dev"]), .brew(["libmaxminddb"])]
        ),
        .systemLibrary(
            name: "CLibcurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"]), .brew(["curl"])]
        ),
        .systemLibrary(
            name: "CLibpq",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),

        // MARK: - The product, inside out: core -> store -> server -> executable

        // swift-certificates and swift-asn1 are pure Swift like swift-crypto: the notification's chain check
        // stays in the core, testable without a socket.
        .target(
            name: "LinkOutCore",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: librarySwiftSettings
        ),
        .target(
            name: "LinkOutStore",
            dependencies: ["LinkOutCore", "CLibpq", "CSQLite"],
            swiftSettings: librarySwiftSettings
        ),
        .target(
            name: "LinkOutServer",
            dependencies: [
                "LinkOutCore",
                "LinkOutStore",
                "CLibcurl",
                "CLibevent",
                "CLibmaxminddb",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "linkout",
            dependencies: [
                "LinkOutCore",
                "LinkOutStore",
                "LinkOutServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: - Tests

        // What the test targets share: Apple's sample token, token and visit builders, a throwaway
        // PostgreSQL server, and the gateway as a real process (`GatewayProcess`, its HTTP client and its
        // scratch folders). Only the integration tests start the binary, so only they depend on it.
        .target(
            name: "LinkOutTestSupport",
            dependencies: ["LinkOutCore"],
            path: "Tests/LinkOutTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LinkOutCoreTests",
            dependencies: [
                "LinkOutCore",
                "LinkOutTestSupport",
                // AppStoreJWTTests make their own P-256 keys and check the signatures independently.
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LinkOutStoreTests",
            dependencies: ["LinkOutCore", "LinkOutStore", "LinkOutTestSupport"],
            swiftSettings: swiftSettings
        ),
        // The server's parts in-process, without sockets: the responders answer requests built from bytes,
        // and the assembly starts and stops its parts in order.
        .testTarget(
            name: "LinkOutServerTests",
            dependencies: [
                "LinkOutCore", "LinkOutServer", "LinkOutStore", "LinkOutTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Starts the real `linkout` binary; depending on the executable makes `swift test` build it.
        // HealthCheckerTests also drive LinkOutServer's checker directly against real destination servers.
        .testTarget(
            name: "LinkOutIntegrationTests",
            dependencies: [
                "linkout",
                "LinkOutCore",
                "LinkOutServer",
                "LinkOutStore",
                "LinkOutTestSupport",
                .product(name: "Logging", package: "swift-log"),
                // AppleStandInTests sign their own ES256 JWTs, as linkout's Apple client will.
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            exclude: [
                "Support/test_destination.py", "Support/apple_standin.py", "Support/notification_chain.py", "Support/apple_verify.py",
                "Support/commit_cutting_proxy.py", "Support/dashboard_browser.py", "Support/differential_h11.py", "Support/provider_sign.py",
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
