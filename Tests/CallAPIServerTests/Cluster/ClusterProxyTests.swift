import CallAPIServerTesting
import CallAPISignalProtocol
import Foundation
import Logging
import NIOSSL
import PostgresNIO
import Testing

@testable import CallAPIServer
@testable import CallAPISignalClient

/// Debian's HAProxy, which `.ci/run` installs and names in `CALLAPI_TEST_HAPROXY`.
let testHAProxy: String? = {
    let path = ProcessInfo.processInfo.environment["CALLAPI_TEST_HAPROXY"] ?? "/usr/sbin/haproxy"
    return FileManager.default.isExecutableFile(atPath: path) ? path : nil
}()

/// The deployment shape of docs/scale-out.md: three `callapi serve` processes on one PostgreSQL behind HAProxy with
/// `deploy/haproxy.cfg` as shipped (TLS, WebSockets, health checks on /healthz), one node killed mid-session.
@Suite(
    .enabled(if: LedgerBackend.postgresURL != nil, LedgerBackend.postgresMissing),
    .enabled(if: CLIProcess.executable != nil, "the callapi executable is not built"),
    .enabled(if: testHAProxy != nil, "HAProxy is not installed (.ci/run installs it)"))
struct ClusterProxyTests {
    /// Logs in through the proxy, retrying while it still sends connections to a node that is gone.
    static func loggedIn(_ user: String, proxyPort: Int) async throws -> RawSocket {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .none  // the test's self-signed certificate
        let tls = configuration
        let token = try await ClusterNodeDeathTests.token(user)
        return try await withTimeout(15, "a login through the proxy") {
            while true {
                let socket = RawSocket(url: "wss://localhost:\(proxyPort)/v1/signal", tls: tls)
                if (try? await socket.login(token)) != nil { return socket }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// The node a user's session is on, from the cluster's rows.
    static func node(of user: String, database: String) async throws -> String {
        let logger = Logger(label: "test.cluster")
        let connection = try await PostgresConnection.connect(
            configuration: try PostgresLedgerStore.configuration(url: database), id: 1, logger: logger)
        defer { Task { try? await connection.close() } }
        let rows = try await connection.query(
            "SELECT node_id FROM callapi_cluster_sessions WHERE user_id = \(user)", logger: logger)
        for try await node in rows.decode(String.self) { return node }
        throw TimedOut(what: "a session row of \(user)")
    }

    /// Three nodes on a new database behind HAProxy with `deploy/haproxy.cfg`; the proxy's port.
    static func cluster() async throws -> (database: String, nodes: [String: CLIProcess], proxy: CLIProcess, port: Int)
    {
        let database = try await LedgerBackend.freshPostgresURL()
        var nodes: [String: CLIProcess] = [:]
        var ports: [Int] = []
        for id in ["n1", "n2", "n3"] {
            let (process, port) = try await ClusterNodeDeathTests.node(id, database: database)
            nodes[id] = process
            ports.append(port)
        }
        let proxy = try await Self.proxy(to: ports)
        return (database, nodes, proxy.process, proxy.port)
    }

    /// HAProxy with `deploy/haproxy.cfg` as shipped in front of the nodes at `ports` (three), with a new
    /// self-signed certificate for localhost; the proxy, its port and the certificate (PEM).
    static func proxy(to ports: [Int]) async throws -> (process: CLIProcess, port: Int, certificatePEM: String) {
        let environment = ports.enumerated().map { "CALLAPI_NODE\($0.offset + 1)=127.0.0.1:\($0.element)" }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("callapi-proxy-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let pem = FileManager.default.temporaryDirectory.appendingPathComponent("callapi-proxy-\(UUID()).pem").path
        let certificate = try await runToEnd(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost", "-addext",
                "subjectAltName=DNS:localhost", "-keyout", "\(folder.path)/key.pem", "-out", "\(folder.path)/cert.pem",
            ])
        #expect(certificate.status == 0, "\(certificate.output)")
        // HAProxy takes the chain and its key in one file.
        let chain = try String(contentsOfFile: "\(folder.path)/cert.pem", encoding: .utf8)
        let key = try String(contentsOfFile: "\(folder.path)/key.pem", encoding: .utf8)
        try (chain + key).write(toFile: pem, atomically: true, encoding: .utf8)
        let proxyPort = try await freeLoopbackPort()
        let proxy = try CLIProcess(
            shell: "env " + environment.joined(separator: " ")
                + " CALLAPI_PROXY_BIND=127.0.0.1:\(proxyPort) CALLAPI_PROXY_CERT=\(pem) "
                + "\(testHAProxy!) -db -f deploy/haproxy.cfg")
        return (proxy, proxyPort, chain)
    }

    @Test func clientsThroughTheProxyReachEachOtherAcrossNodesAndMoveToALiveNodeWhenTheirsIsKilled() async throws {
        let (database, nodes, proxy, proxyPort) = try await Self.cluster()
        // Whatever happens, no process outlives the test.
        defer {
            proxy.kill()
            for process in nodes.values { process.kill() }
        }
        let alice = try await Self.loggedIn("6001", proxyPort: proxyPort)
        let bob = try await Self.loggedIn("6002", proxyPort: proxyPort)
        let aliceNode = try await Self.node(of: "6001", database: database)
        let bobNode = try await Self.node(of: "6002", database: database)
        // The proxy balances by the fewest connections: two clients land on two nodes.
        #expect(aliceNode != bobNode)
        try await ClusterEndToEndTests.waitOnline("6002", seenBy: alice)
        alice.send(.send(.init(id: 1, to: "6002", body: "hello", ttl: nil)))
        _ = try await ClusterEndToEndTests.frame(on: bob, "the first message") {
            if case .message(let message) = $0, message.body == "hello" { true } else { false }
        }

        nodes[bobNode]?.kill()
        alice.send(.send(.init(id: 2, to: "6002", body: "still-there?", ttl: nil)))
        let answer = try await ClusterEndToEndTests.frame(on: alice, "the answer") {
            if case .answer(let answer) = $0, answer.id == 2 { true } else { false }
        }
        guard case .answer(let delivered) = answer else { throw UnexpectedFrame(frame: answer) }
        #expect(delivered.result == .delivered)
        // Bob's client reconnects to the same public address, and the proxy sends it to a live node.
        let bobAgain = try await Self.loggedIn("6002", proxyPort: proxyPort)
        _ = try await ClusterEndToEndTests.frame(on: bobAgain, within: 10, "the message sent during the kill") {
            if case .message(let message) = $0, message.body == "still-there?" { true } else { false }
        }
        #expect(try await Self.node(of: "6002", database: database) != bobNode)

        for (id, process) in nodes where id != bobNode {
            process.interrupt()
            #expect(try await process.finish() == 0)
        }
    }

    /// A member of `channel` through the proxy, as `RTCChannelClient` connects (the channel in the query); the members
    /// its `joined` lists.
    static func join(_ channel: String, uid: UInt, proxyPort: Int) async throws -> (RawSocket, [UInt]) {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .none
        let authority = try await TokenAuthority.make(
            key: .hs256(secret: ClusterNodeDeathTests.secret), clock: SystemServerClock())
        let token = try await authority.issue(userId: "\(uid)", ttlSeconds: 3600, channel: channel).token
        let url = RTCChannelClient.joinURL(from: "wss://localhost:\(proxyPort)", channel: channel)
        let socket = RawSocket(url: url, tls: configuration)
        socket.sendText(#"{"type":"join","channel":"\#(channel)","uid":\#(uid),"token":"\#(token)"}"#)
        guard case .text(let text) = try await socket.next(timeout: 10),
            let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
            object["type"] as? String == "joined"
        else { throw TimedOut(what: "joined for \(uid) in \(channel)") }
        return (socket, (object["members"] as? [Int] ?? []).map { UInt($0) })
    }

    /// The operator's channel API through the proxy (`curl`: the proxy's certificate is the test's own).
    static func channelAPI(_ path: String, body: String? = nil, proxyPort: Int) async throws -> String {
        var arguments = ["-sk", "-H", "Authorization: Bearer \(ClusterNodeDeathTests.adminKey)"]
        if let body { arguments += ["-H", "Content-Type: application/json", "-d", body] }
        let result = try await runToEnd("/usr/bin/curl", arguments + ["https://localhost:\(proxyPort)\(path)"])
        return result.output
    }

    /// Our own media's signaling through the proxy: the two members of each channel meet on one node, whichever
    /// node the hash picks, while signaling clients spread over all three; the operator's channel API reaches the
    /// channel's node too.
    @Test func theMembersOfAChannelMeetOnOneNodeThroughTheProxy() async throws {
        let (_, nodes, proxy, proxyPort) = try await Self.cluster()
        defer {
            proxy.kill()
            for process in nodes.values { process.kill() }
        }
        _ = try await Self.loggedIn("7000", proxyPort: proxyPort)  // the proxy is up
        var sockets: [RawSocket] = []
        for index in 1...6 {
            let channel = "call-\(index)"
            let (first, alone) = try await Self.join(channel, uid: 1001, proxyPort: proxyPort)
            let (second, met) = try await Self.join(channel, uid: 1002, proxyPort: proxyPort)
            #expect(alone == [] && met == [1001], "\(channel)")
            let members = try await Self.channelAPI("/v1/channels/\(channel)", proxyPort: proxyPort)
            #expect(members.contains("[1001,1002]"), "\(channel): \(members)")
            sockets += [first, second]
        }
        let kicked = try await Self.channelAPI("/v1/channels/call-3/kick", body: #"{"uid":1002}"#, proxyPort: proxyPort)
        #expect(kicked.contains("\"kicked\":true"), "\(kicked)")
        for process in nodes.values {
            process.interrupt()
            #expect(try await process.finish() == 0)
        }
    }
}
