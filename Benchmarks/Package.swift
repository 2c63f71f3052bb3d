// swift-tools-version: 6.1
import PackageDescription

// The machine bench drives `CallStateMachine`, which CallAPI declares `package`. Swift grants `package` access to
// modules compiled with the same package name, and SwiftPM names a package by its identity: the last component of
// the main package's directory, lowercased, other characters than letters, digits and `_` written `_`. The bench
// target is compiled under that name (and not under its own), so it reads CallAPI's own module instead of a second copy of its sources.
let mainPackageName: String = {
    let directory = Context.packageDirectory.split(separator: "/").dropLast().last.map(String.init) ?? "callapi"
    let name = String(
        directory.lowercased().map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") ? $0 : "_" })
    return name.first?.isNumber == true ? "_" + name : name
}()

// The benchmarks of callapi, a package of their own so that the product builds only what users use:
// `callapi-bench relay|calls|connections|media|machine|serve` and `callapi-allocs` (scripts/bench.sh runs them).
let package = Package(
    name: "callapi-benchmarks",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "callapi-bench", targets: ["callapi-bench"]),
        .executable(name: "callapi-allocs", targets: ["callapi-allocs"]),
        .executable(name: "callapi-machine-bench", targets: ["callapi-machine-bench"]),
    ],
    dependencies: [
        .package(name: "callapi", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.20.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.1.0"),
        .package(url: "https://github.com/ordo-one/malloc-interposer", from: "1.5.0"),
    ],
    targets: [
        // The state machine driven through full calls: timed by `callapi-bench machine`, counted by
        // `callapi-allocs`.
        .target(
            name: "CallAPIMachineBench", dependencies: [.product(name: "CallAPI", package: "callapi")],
            // No package name of this package's own, which would come after the flag and win.
            packageAccess: false, swiftSettings: [.unsafeFlags(["-package-name", mainPackageName])]
        ),
        // Its own executable, so the malloc interposer is never linked into `callapi-bench`.
        .executableTarget(
            name: "callapi-allocs",
            dependencies: [
                "CallAPIMachineBench", .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
            ]
        ),
        // `callapi-bench machine` without the rest of the stack: builds in a minute, for iterating on the machine.
        .executableTarget(name: "callapi-machine-bench", dependencies: ["CallAPIMachineBench"]),
        .executableTarget(
            name: "callapi-bench",
            dependencies: [
                "CallAPIMachineBench",
                .product(name: "CallAPI", package: "callapi"),
                .product(name: "CallAPITesting", package: "callapi"),
                .product(name: "CallAPIServer", package: "callapi"),
                .product(name: "CallAPIServerTesting", package: "callapi"),
                .product(name: "CallAPISignalClient", package: "callapi"),
                .product(name: "CallAPIMQTT", package: "callapi"),
                .product(name: "CallAPIMatrix", package: "callapi"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        .testTarget(name: "CallAPIBenchTests", dependencies: ["callapi-bench", "CallAPIMachineBench"]),
    ],
    swiftLanguageModes: [.v6]
)

// The media bench needs the WebRTC engine, which the main package builds only with `CALLAPI_WEBRTC=1`
// (scripts/setup-webrtc.sh installs GStreamer); without it `callapi-bench media` says so and stops.
#if os(Linux)
    if Context.environment["CALLAPI_WEBRTC"] == "1" {
        for target in package.targets where target.name == "callapi-bench" {
            target.dependencies.append(.product(name: "CallAPIWebRTC", package: "callapi"))
            // `#if CALLAPI_WEBRTC`, not `canImport`: a stale module in .build would satisfy `canImport`.
            target.swiftSettings = (target.swiftSettings ?? []) + [.define("CALLAPI_WEBRTC")]
        }
    }
#endif
