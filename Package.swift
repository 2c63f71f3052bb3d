// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "callapi",
    platforms: [.macOS(.v14), .iOS(.v15)],
    products: [
        .library(name: "CallAPI", targets: ["CallAPI"]),
        .library(name: "CallAPIWire", targets: ["CallAPIWire"]),
        .library(name: "CallAPITesting", targets: ["CallAPITesting"]),
        .library(name: "CallAPIServer", targets: ["CallAPIServer"]),
        .library(name: "CallAPIServerTesting", targets: ["CallAPIServerTesting"]),
        .library(name: "CallAPISignalClient", targets: ["CallAPISignalClient"]),
        .library(name: "CallAPISystemCall", targets: ["CallAPISystemCall"]),
        .library(name: "CallAPISystemCallTesting", targets: ["CallAPISystemCallTesting"]),
        .library(name: "CallAPIMQTT", targets: ["CallAPIMQTT"]),
        .library(name: "CallAPIMatrix", targets: ["CallAPIMatrix"]),
        .library(name: "CallAPIPushMock", targets: ["CallAPIPushMock"]),
        .executable(name: "callapi", targets: ["callapi"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.5.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.2.0"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket", from: "1.2.0"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.0.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.30.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.20.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.20.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.0.0"..<"5.0.0"),
        .package(url: "https://github.com/vapor/sqlite-nio", from: "1.13.2"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.30.0"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
    ],
    targets: [
        // The call message's vocabulary and the one JSON reader and writer: no dependencies at all.
        .target(name: "CallAPIWire"),
        // The client library: no dependencies beyond the toolchain.
        .target(name: "CallAPI", dependencies: ["CallAPIWire"]),
        .target(name: "CallAPITesting", dependencies: ["CallAPI"]),
        // Wire protocol between the signaling server and its client (shared, dependency-free).
        .target(name: "CallAPISignalProtocol", dependencies: ["CallAPIWire"]),
        // The server's pure machines (hub, channels, ledger, invitations, match, webhooks, push policy, token
        // lease, limits): no NIO, no networking, no clock, so the compiler keeps I/O out of them.
        .target(
            name: "CallAPIServerCore",
            dependencies: [
                "CallAPISignalProtocol",
                "CallAPIWire",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
                // HMAC only (TURN credentials): pure computation, no I/O.
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "CallAPIServer",
            dependencies: [
                "CallAPIServerCore",
                "CallAPISignalProtocol",
                "CallAPIWire",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            plugins: ["EmbedWebFiles"]
        ),
        // The package's Web folder (the JavaScript client, the /phone page) compiled into CallAPIServer, so `callapi serve` is one file to ship.
        .executableTarget(name: "callapi-embed-web"),
        .plugin(name: "EmbedWebFiles", capability: .buildTool(), dependencies: ["callapi-embed-web"]),
        // A real server in this process on a loopback port, and a server clock tests move by hand: what the tests,
        // the benchmarks and the media tests start servers with.
        .target(
            name: "CallAPIServerTesting",
            dependencies: [
                "CallAPIServer",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        .target(
            name: "CallAPISignalClient",
            dependencies: [
                "CallAPI",
                "CallAPISignalProtocol",
                "CallAPIWire",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // Signaling adapters over third-party services (docs/adapters.md).
        .target(
            name: "CallAPIMQTT",
            dependencies: [
                "CallAPI", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .target(
            name: "CallAPIMatrix",
            dependencies: [
                "CallAPI",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .executableTarget(
            name: "callapi",
            dependencies: [
                "CallAPI",
                "CallAPITesting",
                "CallAPIServer",
                "CallAPIServerCore",
                "CallAPISignalClient",
                "CallAPISignalProtocol",
                "CallAPIPushMock",
                "CallAPISystemCall",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // A local stand-in for APNs and FCM (HTTP/2 over TLS) that checks and records pushes: tests and
        // `callapi push-mock`.
        .target(
            name: "CallAPIPushMock",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        // The bridge to a system call screen (CallKit and PushKit on Apple platforms) and its simulated screen.
        .target(name: "CallAPISystemCall", dependencies: ["CallAPI"]),
        .target(name: "CallAPISystemCallTesting", dependencies: ["CallAPI", "CallAPISystemCall"]),
        .testTarget(name: "CallAPIWireTests", dependencies: ["CallAPIWire"]),
        .testTarget(name: "CallAPITests", dependencies: ["CallAPI", "CallAPITesting"]),
        .testTarget(name: "CallAPICLITests", dependencies: ["callapi", "CallAPI", "CallAPITesting"]),
        .testTarget(
            name: "CallAPISystemCallTests",
            dependencies: ["CallAPI", "CallAPITesting", "CallAPISystemCall", "CallAPISystemCallTesting"]
        ),
        .testTarget(
            name: "CallAPIAdapterTests",
            dependencies: [
                "CallAPI", "CallAPITesting", "CallAPIMQTT", "CallAPIMatrix",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        .testTarget(name: "CallAPISignalProtocolTests", dependencies: ["CallAPISignalProtocol", "CallAPIWire"]),
        .testTarget(
            name: "CallAPISignalClientTests",
            dependencies: [
                "CallAPI", "CallAPISignalClient", "CallAPISignalProtocol",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "CallAPIServerCoreTests",
            dependencies: ["CallAPIServerCore", "CallAPISignalProtocol", "CallAPIWire", "CallAPITesting"]
        ),
        .testTarget(
            name: "CallAPIServerTests",
            dependencies: [
                "CallAPI", "CallAPITesting", "CallAPIServer", "CallAPIServerCore", "CallAPIServerTesting",
                "CallAPISignalClient", "CallAPISignalProtocol", "CallAPIPushMock", "CallAPISystemCall", "CallAPIWire",
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// Real media on Linux: a WebRTC engine on GStreamer's webrtcbin behind the RTC seam. Opt-in, so that a machine
// with only the Swift toolchain builds and runs everything else: `scripts/setup-webrtc.sh` installs the GStreamer
// packages, and `CALLAPI_WEBRTC=1` in the environment adds the engine to the build (the manifest is evaluated
// again when the environment changes).
#if os(Linux)
    let buildsWebRTC = Context.environment["CALLAPI_WEBRTC"] == "1"
#else
    let buildsWebRTC = false
#endif
if buildsWebRTC {
    package.products.append(.library(name: "CallAPIWebRTC", targets: ["CallAPIWebRTC"]))
    package.targets += [
        .systemLibrary(
            name: "CGStreamer", pkgConfig: "gstreamer-webrtc-1.0",
            providers: [
                .apt(["libgstreamer1.0-dev", "libgstreamer-plugins-base1.0-dev", "libgstreamer-plugins-bad1.0-dev"])
            ]
        ),
        .target(
            name: "CGStreamerShim", dependencies: ["CGStreamer"],
            linkerSettings: [
                .linkedLibrary("gstsdp-1.0"), .linkedLibrary("gstapp-1.0"), .linkedLibrary("gstwebrtc-1.0"),
            ]
        ),
        .target(
            name: "CallAPIWebRTC",
            dependencies: [
                "CallAPI", "CallAPISignalClient", "CallAPISignalProtocol", "CGStreamerShim",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "CallAPIWebRTCTests",
            dependencies: [
                "CallAPIWebRTC", "CallAPI", "CallAPITesting", "CallAPIServer", "CallAPIServerCore",
                "CallAPIServerTesting", "CallAPISignalClient", "CallAPISignalProtocol",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
    ]
    // `callapi phone` and `callapi demo` use real media where it is available. The code asks `#if CALLAPI_WEBRTC`,
    // not `canImport`: a module left in .build by an earlier build with the engine would satisfy `canImport`.
    for target in package.targets where target.name == "callapi" {
        target.dependencies.append("CallAPIWebRTC")
        target.swiftSettings = (target.swiftSettings ?? []) + [.define("CALLAPI_WEBRTC")]
    }
}
