// swift-tools-version:6.0
import PackageDescription

// Instruction counts per request stage, measured under callgrind by bench/stages/run. Kept out of the main
// package so the product's build and tests never compile it.
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
    ]
)
