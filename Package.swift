// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "AFNetworking",
    products: [
        .library(name: "AFNetworking", targets: ["AFNetworking"]),
        .executable(name: "afn", targets: ["afn"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    ],
    targets: [
        // Typed, prefixed wrappers around libcurl's variadic C API (Swift cannot call variadic C).
        .target(
            name: "CAFCurl",
            linkerSettings: [.linkedLibrary("curl"), .linkedLibrary("ssl"), .linkedLibrary("crypto")]
        ),
        // Typed, prefixed wrappers around the OpenSSL calls Swift cannot use directly
        // (macros, STACK_OF, pointer-advancing d2i/i2d, verify callbacks).
        .target(
            name: "CAFOpenSSL",
            linkerSettings: [.linkedLibrary("ssl"), .linkedLibrary("crypto")]
        ),
        // The netlink socket reachability listens on (Linux headers Swift cannot import).
        .target(name: "CAFSystem"),
        .target(
            name: "AFNetworking",
            dependencies: ["CAFCurl", "CAFOpenSSL", "CAFSystem"]
        ),
        .executableTarget(
            name: "afn",
            dependencies: [
                "AFNetworking",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "afn-bench",
            dependencies: ["AFNetworking"],
            path: "Benchmarks/Swift"
        ),
        .testTarget(
            name: "AFNetworkingTests",
            dependencies: [
                "AFNetworking",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            resources: [.copy("Security/Resources")]
        ),
    ],
    swiftLanguageModes: [.v5]
)
