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
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        // A client span per request attempt and a parent span per RequestGraph,
        // when the process bootstraps a tracer (nothing otherwise).
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        // `swift package generate-documentation` (the DocC catalog; built by `make test`).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // The system libraries, through pkg-config: when one is missing SwiftPM
        // prints the apt package that provides it.
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        // libpsl: which cookie Domain attributes are public suffixes (RFC 6265 §5.3
        // step 5). Debian's maintained list, not one copied into the repository.
        .systemLibrary(name: "CPSL", pkgConfig: "libpsl", providers: [.apt(["libpsl-dev"])]),
        // Typed, prefixed wrappers around libcurl's variadic C API (Swift cannot call variadic C).
        .target(name: "CAFCurl", dependencies: ["CCurl", "COpenSSL"]),
        // Typed, prefixed wrappers around the OpenSSL calls Swift cannot use directly
        // (macros, STACK_OF, pointer-advancing d2i/i2d, verify callbacks).
        .target(name: "CAFOpenSSL", dependencies: ["COpenSSL"]),
        // One bounded-step decoder over zlib, brotli and zstd: the library undoes
        // content codings itself so a pause never makes libcurl buffer an expansion.
        .target(
            name: "CAFCompression",
            linkerSettings: [.linkedLibrary("z"), .linkedLibrary("brotlidec"), .linkedLibrary("zstd")]
        ),
        // What Swift's Glibc module does not export: the netlink socket reachability
        // listens on (Linux headers), and glibc's malloc_trim (<malloc.h>), which the
        // engine calls once it has been idle.
        .target(name: "CAFSystem"),
        // One question to libpsl (is this a public suffix?), behind a header
        // without libpsl's types.
        .target(name: "CAFPSL", dependencies: ["CPSL"]),
        // The engine: the AFNetworking network thread, libcurl handles, transfers and the
        // CURLcode → NSURLError table. The AFNetworking target reaches it through `package`
        // declarations; only `LockedState` is public, behind the `AFNetworkingInternal` SPI,
        // because the compiler inlines public (not package) inlinable code across targets.
        .target(
            name: "AFNetworkingTransport",
            dependencies: ["CAFCurl", "CAFOpenSSL", "CAFCompression", "CAFSystem"]
        ),
        .target(
            name: "AFNetworking",
            dependencies: [
                "AFNetworkingTransport", "CAFCurl", "CAFOpenSSL", "CAFSystem", "CAFPSL",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        .executableTarget(
            name: "afn",
            dependencies: [
                "AFNetworking",
                // Package-level access to the heads as received (afn -i/-v).
                "AFNetworkingTransport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "afn-bench",
            // CAFSystem: the soak trims the heap the way the engine does.
            dependencies: ["AFNetworking", "CAFSystem"],
            path: "Benchmarks/Swift"
        ),
        // A Swift 6 program as a new user writes one (top-level code and an actor
        // handing closures to a custom completion queue); a test runs it.
        .executableTarget(
            name: "swift6-caller",
            dependencies: ["AFNetworking"],
            path: "Tests/Swift6Caller"
        ),
        // Waits for an operation on the main actor (dispatchMain, top-level
        // await); MainActorWaiterTests runs it under a time limit.
        .executableTarget(
            name: "main-actor-waiter",
            dependencies: ["AFNetworking"],
            path: "Tests/MainActorWaiter"
        ),
        .testTarget(
            name: "AFNetworkingTests",
            dependencies: [
                "AFNetworking",
                "AFNetworkingTransport",
                "CAFCompression",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ],
            // The 2.7 symbol list is read by MigrationCoverageTests through #filePath.
            exclude: ["Migration/afnetworking-2.7-symbols.txt"],
            resources: [.copy("Security/Resources")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
