// swift-tools-version:6.0
// The peers `make bench` compares against, in the same run and on the same
// nginx: AsyncHTTPClient and FoundationNetworking's URLSession. A package of
// its own, so the library never depends on AsyncHTTPClient.
import PackageDescription

let package = Package(
    name: "afn-peers",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(url: "https://github.com/swift-server/async-http-client.git", exact: "1.37.0"),
        // S6's TLS configuration (AsyncHTTPClient's own TLS dependency).
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
    ],
    targets: [
        .executableTarget(
            name: "afn-peers",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
