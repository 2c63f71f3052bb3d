import ArgumentParser
import Foundation
import Testing

@testable import callapi_bench

/// `--peer` parsing and the failure when the peer is not running; none of these needs Mosquitto or Synapse.
@Suite("callapi-bench --peer")
struct BenchPeerTests {
    @Test func relayAndCallsParseThePeer() throws {
        let relay = try RelayBenchCommand.parse(["--peer", "mosquitto", "--peer-url", "mqtt://127.0.0.1:1999"])
        #expect(relay.peer.settings == BenchPeerSettings(kind: .mosquitto, url: "mqtt://127.0.0.1:1999"))
        let calls = try CallsBenchCommand.parse(["--peer", "synapse", "--peer-secret", "s"])
        #expect(calls.peer.settings == BenchPeerSettings(kind: .synapse, registrationSecret: "s"))
        #expect(try RelayBenchCommand.parse([]).peer.peer == .ours)
        #expect(throws: (any Error).self) { try RelayBenchCommand.parse(["--peer", "kafka"]) }
    }

    @Test func peerURLsAreChecked() throws {
        let mqtt = try BenchPeerSettings(kind: .mosquitto).mqttConfiguration()
        #expect(mqtt.host == "127.0.0.1" && mqtt.port == 1_883)
        #expect(
            try BenchPeerSettings(kind: .mosquitto, url: "mqtt://localhost:1884").mqttConfiguration().port == 1_884)
        #expect(throws: BenchPeerError.self) {
            try BenchPeerSettings(kind: .mosquitto, url: "http://x").mqttConfiguration()
        }
        #expect(
            try BenchPeerSettings(kind: .synapse, url: "http://127.0.0.1:8008/").httpBaseURL()
                == "http://127.0.0.1:8008")
        #expect(throws: BenchPeerError.self) { try BenchPeerSettings(kind: .synapse, url: "mqtt://x").httpBaseURL() }
        #expect(
            try BenchPeerSettings(kind: .ours, url: "ws://127.0.0.1:9000").signalURL()
                == "ws://127.0.0.1:9000/v1/signal")
        #expect(
            try BenchPeerSettings(kind: .ours, url: "ws://127.0.0.1:9000/v1/signal").signalURL()
                == "ws://127.0.0.1:9000/v1/signal")
        #expect(throws: BenchPeerError.self) { try BenchPeerSettings(kind: .ours, url: "http://x").signalURL() }
    }

    @Test func ourServerElsewhereNeedsItsSecret() async throws {
        await #expect(throws: BenchPeerError.missingSecret(.ours)) {
            _ = try await BenchPeerSettings(kind: .ours, url: "ws://127.0.0.1:9000", registrationSecret: "").start()
        }
    }

    @Test func anUnreachableMosquittoIsAClearError() async throws {
        let port = try Self.closedPort()
        let settings = BenchPeerSettings(kind: .mosquitto, url: "mqtt://127.0.0.1:\(port)")
        let error = await #expect(throws: BenchPeerError.self) { _ = try await settings.start() }
        guard case .unreachable(let peer, let address, _) = error else {
            Issue.record("expected .unreachable, got \(String(describing: error))")
            return
        }
        #expect(peer == .mosquitto)
        #expect(address == "mqtt://127.0.0.1:\(port)")
        #expect(error.map { "\($0)" }?.contains("not reachable") == true)
    }

    @Test func anUnreachableSynapseIsAClearError() async throws {
        let port = try Self.closedPort()
        let settings = BenchPeerSettings(kind: .synapse, url: "http://127.0.0.1:\(port)", registrationSecret: "s")
        let error = await #expect(throws: BenchPeerError.self) { _ = try await settings.start() }
        guard case .unreachable(.synapse, _, _) = error else {
            Issue.record("expected .unreachable(.synapse), got \(String(describing: error))")
            return
        }
        await #expect(throws: BenchPeerError.missingSecret(.synapse)) {
            _ = try await BenchPeerSettings(kind: .synapse).start()
        }
    }

    /// A loopback port nothing listens on: bound, then released.
    static func closedPort() throws -> Int {
        #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRINUSE) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
