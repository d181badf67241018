// swift-tools-version:6.0
import PackageDescription

// libFuzzer targets for the parts of the core that read untrusted bytes: the token decoder, the query
// scanner (through the whole Gateway.decide) and the config loader. Kept out of the main package so the
// product's build and tests never compile them; built and run by fuzz/run (see fuzz/README.md) with
//   swift build -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
let package = Package(
    name: "linkout-fuzz",
    dependencies: [
        .package(name: "linkout", path: ".."),
    ],
    targets: [
        // The hand-over to libFuzzer's driver every target needs.
        .target(name: "FuzzDriver"),
        .executableTarget(
            name: "fuzz-token",
            dependencies: ["FuzzDriver", .product(name: "LinkOutCore", package: "linkout")]
        ),
        .executableTarget(
            name: "fuzz-query",
            dependencies: ["FuzzDriver", .product(name: "LinkOutCore", package: "linkout")]
        ),
        .executableTarget(
            name: "fuzz-config",
            dependencies: ["FuzzDriver", .product(name: "LinkOutCore", package: "linkout")]
        ),
    ]
)
