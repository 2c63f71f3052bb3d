import NIOCore
import NIOPosix

/// A loopback port nothing listens on: bound, read back, released (for a process the test starts, which binds it).
func freeLoopbackPort() async throws -> Int {
    let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .bind(host: "127.0.0.1", port: 0).get()
    let port = channel.localAddress?.port ?? 0
    try await channel.close()
    return port
}
