// swift-tools-version:6.0
import PackageDescription

// Benchmarks of the core and the store without HTTP: instruction counts per request stage (bench/stages/run,
// under callgrind) and the SQLite writer's rows per second as the table grows (bench/stages/writer).
// Kept out of the main package so the product's build and tests never compile them.
let package = Package(
    name: "linkout-stages",
    dependencies: [
        .package(name: "linkout", path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "linkout-stages",
            dependencies: [
                .product(name: "LinkOutCore", package: "linkout"),
                .product(name: "LinkOutStore", package: "linkout"),
            ]
        ),
        .executableTarget(
            name: "linkout-writer-bench",
            dependencies: [
                .product(name: "LinkOutCore", package: "linkout"),
                .product(name: "LinkOutStore", package: "linkout"),
            ]
        ),
    ],
    // Plain top-level scripts: the Swift 6 isolation checks add nothing to a single-threaded benchmark.
    swiftLanguageModes: [.v5]
)
