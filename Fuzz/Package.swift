// swift-tools-version:6.0
// The libFuzzer harness lives in its own package: it is built only with
// -sanitize=fuzzer (libFuzzer provides `main`), never by the main package's
// `swift build` or `swift test`. Run it with `make fuzz` from the repository root.
import PackageDescription

let package = Package(
    name: "AFNetworkingFuzz",
    dependencies: [.package(name: "AFNetworking", path: "..")],
    targets: [
        .executableTarget(
            name: "afn-fuzz",
            dependencies: [.product(name: "AFNetworking", package: "AFNetworking")],
            path: "Sources"
        ),
    ],
    swiftLanguageModes: [.v5]
)
