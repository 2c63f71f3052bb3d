import CallAPIServer
import CallAPIServerTesting
import Foundation
import Testing

/// Calls across networks (issue 45): two `callapi phone`s with real media in network namespaces that reach the
/// servers' namespace but not each other, so that their media can only go through coturn there, with the TURN
/// credentials `callapi serve` mints for each room member. Then the same links with routing on: a direct path.
/// Prints each side's accept → first decoded frame, relayed and direct (the README's figures).
@Suite(
    .serialized,
    .enabled(if: CLIProcess.buildsWebRTC, "built without the WebRTC engine"),
    .enabled(
        if: TURNServer.executable != nil, "CALLAPI_TEST_TURNSERVER is not set (scripts/services/install-coturn.sh)"),
    .enabled(if: NetworkLab.isAvailable, "network namespaces need root and ip"))
struct RelayedCallTests {
    let secret = "a-test-secret-that-is-long-enough-0123456789"
    let adminKey = "relay-test-admin-key"

    /// The servers in the lab's middle namespace: coturn and `callapi serve` handing out its TURN URL.
    struct Servers {
        let turn: TURNServer
        let serve: CLIProcess
        let signalURL: String
    }

    func startServers(in lab: NetworkLab) async throws -> Servers {
        let turn = try await TURNServer.start(in: lab.t, addresses: [lab.tAddressForA])
        // One TURN URL for everyone: `b` reaches `t`'s address on `a`'s link through its default route (`t` delivers
        // packets for its own addresses whether or not it forwards).
        let serve = try CLIProcess(
            namespace: lab.t,
            [
                "serve", "--host", "0.0.0.0", "--port", "0", "--secret", secret, "--admin-key", adminKey,
                "--ice-servers",
                "turn:\(lab.tAddressForA):3478?transport=udp,turn:\(lab.tAddressForA):3478?transport=tcp",
                "--turn-secret-file", turn.secretFile, "--ledger", "0",
            ])
        let line = try await serve.expect("listening on ws://", within: 20)
        let port = try #require(
            line.split(separator: ":").last.flatMap { Int($0.prefix(while: \.isNumber)) })
        return Servers(turn: turn, serve: serve, signalURL: "ws://\(lab.tAddressForA):\(port)")
    }

    func phone(_ user: String, in namespace: String, servers: Servers, extra: [String] = []) async throws -> CLIProcess
    {
        let authority = try await TokenAuthority.make(key: .hs256(secret: secret), clock: SystemServerClock())
        let token = try await authority.issue(userId: user, ttlSeconds: 3600).token
        return try CLIProcess(
            namespace: namespace,
            [
                "phone", "--server", servers.signalURL, "--user", user, "--token", token, "--media", "webrtc",
                "--admin-key", adminKey,
            ] + extra)
    }

    /// Bob (1002) in `b` and Alice (1001) in `a`, logged in and prepared, Alice seeing Bob online.
    func twoPhones(in lab: NetworkLab, servers: Servers) async throws -> (alice: CLIProcess, bob: CLIProcess) {
        let bob = try await phone("1002", in: lab.b, servers: servers)
        try await bob.expect("call: prepared", within: 20)
        let alice = try await phone("1001", in: lab.a, servers: servers)
        try await alice.expect("online: 1001, 1002", within: 20)
        try await alice.expect("call: prepared", within: 20)
        return (alice, bob)
    }

    /// Quits `phones` and stops the servers, each exiting cleanly.
    func stop(_ phones: [CLIProcess], _ servers: Servers) async throws {
        for phone in phones {
            phone.type("quit")
            #expect(try await phone.finish(within: 20) == 0)
        }
        servers.serve.interrupt()
        #expect(try await servers.serve.finish(within: 20) == 0)
        try await servers.turn.stop()
    }

    /// One call from `alice` to `bob`, connected on a decoded frame on both sides and hung up; bob's accept → first
    /// decoded frame, from his cost map (milliseconds).
    func call(from alice: CLIProcess, to bob: CLIProcess, caller: String = "1001") async throws -> Int {
        alice.type("call 1002")
        try await bob.expect("call: calling (remoteVideoCall) peer \(caller)", within: 20)
        bob.type("accept")
        try await alice.expect("call: connected (recvRemoteFirstFrame)", within: 30)
        try await bob.expect("call: connected (recvRemoteFirstFrame)", within: 30)
        let costs = try await bob.expect("costs: ")
        alice.type("hangup")
        try await alice.expect("call: prepared (localHangup)", within: 20)
        try await bob.expect("call: prepared (remoteHangup)", within: 20)
        return try Self.acceptToFirstFrame(costs)
    }

    /// Calls of each kind (relayed, direct) whose figures are kept.
    static let calls = 5

    static func median(_ values: [Int]) -> Int { values.sorted()[values.count / 2] }

    static func acceptToFirstFrame(_ costs: String) throws -> Int {
        var stages: [String: Int] = [:]
        for item in costs.split(separator: " ") {
            let parts = item.split(separator: "=")
            if parts.count == 2, let millis = Int(parts[1]) { stages[String(parts[0])] = millis }
        }
        let accept = try #require(stages["acceptCall"], "no acceptCall in \(costs)")
        let frame = try #require(stages["recvFirstFrame"], "no recvFirstFrame in \(costs)")
        return frame - accept
    }

    /// The network-change figure: the reconnect gap of each side (ms from its last media before the break to its
    /// first after), from its `mediaReconnected` event.
    static func gap(_ line: String) throws -> Int {
        let reason = try #require(line.split(separator: "(").last?.prefix { $0.isNumber }, "no gap in \(line)")
        return try #require(Int(reason), "no gap in \(line)")
    }

    @Test func aCallWhosePathBreaksRestartsICEAndResumesThroughTheRelay() async throws {
        let lab = try NetworkLab.make("change")
        defer { lab.remove() }
        try lab.setForwarding(true)
        let servers = try await startServers(in: lab)
        let (alice, bob) = try await twoPhones(in: lab, servers: servers)
        alice.type("call 1002")
        try await bob.expect("call: calling (remoteVideoCall) peer 1001", within: 20)
        try await alice.expect("event: localJoined", within: 20)
        try await bob.expect("event: localJoined", within: 20)
        bob.type("accept")
        try await alice.expect("call: connected (recvRemoteFirstFrame)", within: 30)
        try await bob.expect("call: connected (recvRemoteFirstFrame)", within: 30)
        #expect(try lab.reaches(lab.bAddress, from: lab.a))

        // Alice's default route goes: she still reaches the servers on her link, but no longer Bob.
        let permissionsBefore = servers.turn.logged("CREATE_PERMISSION processed, success")
        try lab.route("del", ["default"], in: lab.a)
        #expect(try !lab.reaches(lab.bAddress, from: lab.a))
        try await alice.expect("event: mediaReconnecting", within: 10)
        try await bob.expect("event: mediaReconnecting", within: 10)
        let aliceGap = try Self.gap(try await alice.expect("event: mediaReconnected", within: 30))
        let bobGap = try Self.gap(try await bob.expect("event: mediaReconnected", within: 30))
        // The new path is a relay: a phone asked coturn to let the other's address through.
        #expect(servers.turn.logged("CREATE_PERMISSION processed, success") > permissionsBefore)
        // The call never left its state: the hang-up ends it as a connected call's does.
        #expect(alice.printedLines(containing: "call: prepared (") == 1)
        #expect(bob.printedLines(containing: "call: prepared (") == 1)
        alice.type("hangup")
        try await alice.expect("call: prepared (localHangup)", within: 20)
        try await bob.expect("call: prepared (remoteHangup)", within: 20)
        print("network change figures: reconnect gap, ms: alice \(aliceGap), bob \(bobGap)")
        try await stop([alice, bob], servers)
    }

    @Test func phonesThatCannotReachEachOtherConnectThroughTheTURNRelay() async throws {
        let lab = try NetworkLab.make("relay")
        defer { lab.remove() }
        // The premise: no route between the phones while `t` does not forward.
        #expect(try !lab.reaches(lab.bAddress, from: lab.a))
        #expect(try lab.reaches(lab.tAddressForB, from: lab.a))
        let servers = try await startServers(in: lab)
        let (alice, bob) = try await twoPhones(in: lab, servers: servers)

        var relayed: [Int] = []
        for _ in 0..<Self.calls { relayed.append(try await call(from: alice, to: bob)) }
        // coturn relayed: both phones allocated and bound a channel to the other's relayed address.
        #expect(servers.turn.logged("ALLOCATE processed, success") >= 2)
        #expect(servers.turn.logged("CREATE_PERMISSION processed, success") >= 2)

        try lab.setForwarding(true)
        #expect(try lab.reaches(lab.bAddress, from: lab.a))
        var direct: [Int] = []
        for _ in 0..<Self.calls { direct.append(try await call(from: alice, to: bob)) }

        print(
            "relay figures: accept → first decoded frame (callee), ms: relayed \(relayed) median "
                + "\(Self.median(relayed)); direct \(direct) median \(Self.median(direct))")
        // With a direct path there, a phone with the relay-only policy still sends its media through coturn.
        alice.type("quit")
        #expect(try await alice.finish(within: 20) == 0)
        let carol = try await phone("1003", in: lab.a, servers: servers, extra: ["--relay-only"])
        try await carol.expect("call: prepared", within: 20)
        let permissionsBefore = servers.turn.logged(":1003>: incoming packet CREATE_PERMISSION processed, success")
        #expect(permissionsBefore == 0)
        _ = try await call(from: carol, to: bob, caller: "1003")
        #expect(servers.turn.logged(":1003>: incoming packet CREATE_PERMISSION processed, success") > 0)
        try await stop([carol, bob], servers)
    }
}
