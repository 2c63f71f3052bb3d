import CallAPIServer
import CallAPIServerTesting
import CallAPISignalProtocol
import Foundation
import Testing

/// Servers sharing one PostgreSQL as a cluster (docs/scale-out.md), over real sockets and the real database that
/// `.ci/run` starts: each test has a database of its own, so its nodes form a cluster of their own.
@Suite(.enabled(if: LedgerBackend.postgresURL != nil, LedgerBackend.postgresMissing))
struct ClusterEndToEndTests {
    /// Nodes in one process, on a new database, with short timings; `configure` adds to each node's settings.
    static func nodes(
        _ ids: [String], database: String? = nil,
        configure: (_ url: String, inout SignalServerConfiguration) -> Void = { _, _ in }
    ) async throws -> (String, [TestServer]) {
        let url: String
        if let database { url = database } else { url = try await LedgerBackend.freshPostgresURL() }
        var servers: [TestServer] = []
        for id in ids {
            servers.append(
                try await TestServer.start(tickIntervalMillis: 100) { configuration in
                    var cluster = ClusterSettings(nodeId: id, databaseURL: url)
                    cluster.heartbeatMillis = 200
                    cluster.deadAfterMillis = 1_000
                    cluster.presenceMillis = 200
                    configuration.cluster = cluster
                    configure(url, &configuration)
                })
        }
        return (url, servers)
    }

    /// Reads frames until one that `match`es (others, such as presence changes, are skipped).
    static func frame(
        on socket: RawSocket, within seconds: Double = 5, _ what: String, where match: (ServerFrame) -> Bool
    ) async throws -> ServerFrame {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < deadline {
            let frame = try await socket.frame(timeout: seconds)
            if match(frame) { return frame }
        }
        throw TimedOut(what: what)
    }

    /// Waits until `observer` is told `user` is online (it subscribes first).
    static func waitOnline(_ user: String, seenBy observer: RawSocket, online: Bool = true) async throws {
        observer.send(.subscribe(.init(id: 90)))
        let first = try await frame(on: observer, "the presence list") {
            if case .presence(let list) = $0, list.id == 90 { true } else { false }
        }
        if case .presence(let list) = first, list.online.contains(user) == online { return }
        _ = try await frame(on: observer, "\(user) \(online ? "online" : "offline")") {
            if case .presenceChanged(let change) = $0, change.userId == user, change.online == online {
                true
            } else {
                false
            }
        }
    }

    @Test func aMessageToAUserOnAnotherNodeArrivesAndItsSenderHearsDeliveredAfterTheWrite() async throws {
        let (_, servers) = try await Self.nodes(["a", "b"])
        let alice = try await servers[0].loggedIn("1001")
        let bob = try await servers[1].loggedIn("1002")
        try await Self.waitOnline("1002", seenBy: alice)

        alice.send(.send(.init(id: 7, to: "1002", body: "{\"hello\":1}", ttl: nil)))
        let received = try await Self.frame(on: bob, "the message") {
            if case .message = $0 { true } else { false }
        }
        guard case .message(let message) = received else { throw UnexpectedFrame(frame: received) }
        #expect(message.from == "1001" && message.body == "{\"hello\":1}")
        #expect(message.messageId.hasPrefix("m-a-"))
        let answer = try await Self.frame(on: alice, "the answer") {
            if case .answer(let answer) = $0, answer.id == 7 { true } else { false }
        }
        guard case .answer(let delivered) = answer else { throw UnexpectedFrame(frame: answer) }
        #expect(delivered.result == .delivered && delivered.sessions == 1)
        #expect(delivered.messageId == message.messageId)

        // And back, in order, once bob's node sees alice (before that it would hold the messages for her).
        try await Self.waitOnline("1001", seenBy: bob)
        for n in 1...5 { bob.send(.send(.init(id: n, to: "1001", body: "\(n)", ttl: nil))) }
        var bodies: [String] = []
        while bodies.count < 5 {
            let frame = try await Self.frame(on: alice, "bob's messages") {
                if case .message = $0 { true } else { false }
            }
            if case .message(let message) = frame { bodies.append(message.body) }
        }
        #expect(bodies == ["1", "2", "3", "4", "5"])
        for server in servers { try await server.stop() }
    }

    @Test func usersListsTheUsersOfEveryNodeAndALogoutElsewhereIsToldToSubscribers() async throws {
        let (_, servers) = try await Self.nodes(["a", "b"])
        let alice = try await servers[0].loggedIn("2001")
        let bob = try await servers[1].loggedIn("2002")
        try await Self.waitOnline("2002", seenBy: alice)
        alice.send(.users(.init(id: 5)))
        let list = try await Self.frame(on: alice, "the user list") {
            if case .presence(let list) = $0, list.id == 5 { true } else { false }
        }
        guard case .presence(let presence) = list else { throw UnexpectedFrame(frame: list) }
        #expect(presence.online == ["2001", "2002"])

        bob.send(.logout(.init(id: 2)))
        _ = try await Self.frame(on: alice, "bob offline") {
            if case .presenceChanged(let change) = $0, change.userId == "2002", !change.online { true } else { false }
        }
        for server in servers { try await server.stop() }
    }

    @Test func aUserOnTwoNodesGetsTheMessageOnBothAndItsOwnCopiesCrossNodes() async throws {
        let (_, servers) = try await Self.nodes(["a", "b"])
        let alice = try await servers[0].loggedIn("3001")
        let bobPhone = try await servers[0].loggedIn("3002")
        let bobTablet = try await servers[1].loggedIn("3002")
        try await Self.waitOnline("3001", seenBy: bobTablet)
        // Alice's view must include the tablet's node before she sends: wait for her answer to count two.
        var sessions = 0
        var attempt = 0
        while sessions < 2 {
            attempt += 1
            alice.send(.send(.init(id: attempt, to: "3002", body: "ring", ttl: nil)))
            let answer = try await Self.frame(on: alice, "the answer") {
                if case .answer(let answer) = $0, answer.id == attempt { true } else { false }
            }
            if case .answer(let delivered) = answer { sessions = delivered.sessions ?? 0 }
            if attempt > 20 { throw TimedOut(what: "a send reaching both of bob's sessions") }
            if sessions < 2 { try await Task.sleep(for: .milliseconds(100)) }
        }
        _ = try await Self.frame(on: bobTablet, "the message on the tablet") {
            if case .message(let message) = $0, message.body == "ring" { true } else { false }
        }
        // The phone answers, with a copy to bob's other sessions: the tablet on the other node learns it.
        bobPhone.send(.send(.init(id: 50, to: "3001", body: "accepted", ttl: nil, copy: true)))
        let copy = try await Self.frame(on: bobTablet, "the copy") {
            if case .message(let message) = $0, message.body == "accepted" { true } else { false }
        }
        guard case .message(let copied) = copy else { throw UnexpectedFrame(frame: copy) }
        #expect(copied.to == "3001" && copied.from == "3002")
        for server in servers { try await server.stop() }
    }

    /// The push flow behind a load balancer: a message held for an offline user on the node that took it reaches
    /// the user when they log in to another node, flagged as held, and its sender hears it was delivered.
    @Test func aMessageHeldForAnOfflineUserReachesThemOnTheNodeTheyLogInTo() async throws {
        let (_, servers) = try await Self.nodes(["a", "b"])
        let alice = try await servers[0].loggedIn("4001")
        alice.send(.send(.init(id: 1, to: "4002", body: "{\"call\":1}", ttl: 60)))
        let queued = try await Self.frame(on: alice, "the answer") {
            if case .answer(let answer) = $0, answer.id == 1 { true } else { false }
        }
        guard case .answer(let answer) = queued else { throw UnexpectedFrame(frame: queued) }
        #expect(answer.result == .queued)

        let bob = try await servers[1].loggedIn("4002")
        let arrived = try await Self.frame(on: bob, "the held message") {
            if case .message = $0 { true } else { false }
        }
        guard case .message(let message) = arrived else { throw UnexpectedFrame(frame: arrived) }
        #expect(message.held == true && message.from == "4001" && message.body == "{\"call\":1}")
        #expect(message.messageId == answer.messageId)
        let result = try await Self.frame(on: alice, "the held result") {
            if case .heldResult = $0 { true } else { false }
        }
        #expect(result == .heldResult(.init(messageId: message.messageId, to: "4002", result: .delivered)))
        for server in servers { try await server.stop() }
    }

    /// A device registered through one node is known to the others: a call held on any node pushes to it.
    @Test func aDeviceRegisteredOnOneNodeIsListedOnAnother() async throws {
        let (_, servers) = try await Self.nodes(["a", "b"])
        let phone = try await servers[0].loggedIn("4101")
        let device = PushDevice(deviceId: "pixel", platform: .fcm, kind: .voip, token: "fcm-token-cluster")
        phone.send(.registerDevice(.init(id: 2, device: device)))
        _ = try await Self.frame(on: phone, "the device list") {
            if case .devices(let list) = $0, list.id == 2 { true } else { false }
        }
        let tablet = try await servers[1].loggedIn("4101")
        var listed: [String] = []
        for attempt in 1...50 where listed.isEmpty {
            tablet.send(.devices(.init(id: 100 + attempt)))
            let answer = try await Self.frame(on: tablet, "the device list on b") {
                if case .devices(let list) = $0, list.id == 100 + attempt { true } else { false }
            }
            if case .devices(let list) = answer { listed = list.devices.map(\.deviceId) }
            if listed.isEmpty { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(listed == ["pixel"])
        for server in servers { try await server.stop() }
    }

    /// A single server's registered devices (its `devices.json`) are written for the cluster when it joins one: a
    /// call held on another node pushes to them without the user registering again. A user the cluster already has
    /// a list for keeps the cluster's.
    @Test func devicesRegisteredBeforeANodeJoinedAClusterAreKnownToTheOtherNodes() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("callapi-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        let kit = try await PushTestKit.start()
        let single = try await TestServer.start { $0.push = kit.pushConfiguration(devicesFile: file.path) }
        for (user, device) in [("4501", PushTestKit.apnsDevice()), ("4502", PushTestKit.fcmDevice())] {
            let socket = try await single.loggedIn(user)
            socket.send(.registerDevice(.init(id: 2, device: device)))
            _ = try await Self.frame(on: socket, "the device list") {
                if case .devices(let list) = $0, list.id == 2 { true } else { false }
            }
            socket.close()
        }
        try await single.stop()

        // The cluster already knows 4502 with another device, registered through node b.
        let (url, first) = try await Self.nodes(["b"]) { _, configuration in
            configuration.push = kit.pushConfiguration()
        }
        let tablet = try await first[0].loggedIn("4502")
        let other = PushDevice(deviceId: "tablet", platform: .fcm, kind: .voip, token: "fcm-token-tablet")
        tablet.send(.registerDevice(.init(id: 2, device: other)))
        _ = try await Self.frame(on: tablet, "the tablet's device list") {
            if case .devices(let list) = $0, list.id == 2 { true } else { false }
        }
        let (_, second) = try await Self.nodes(["a"], database: url) { _, configuration in
            configuration.push = kit.pushConfiguration(devicesFile: file.path)
        }
        let b = first[0]
        try await withTimeout(10, "node b to list 4501's iPhone") {
            while try await !b.admin("GET", "/v1/users/4501/devices").1.contains("\"iphone\"") {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        // 4502 keeps the cluster's list, on both nodes.
        try await withTimeout(10, "node a to take the cluster's list of 4502") {
            while try await !second[0].admin("GET", "/v1/users/4502/devices").1.contains("\"tablet\"") {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        #expect(try await !b.admin("GET", "/v1/users/4502/devices").1.contains("\"pixel\""))
        #expect(try await !second[0].admin("GET", "/v1/users/4502/devices").1.contains("\"pixel\""))
        tablet.close()
        for server in first + second { try await server.stop() }
        await kit.stop()
    }

    /// `POST /v1/calls` behind a load balancer: the order reaches a node the caller is not on, which hands it to the
    /// caller's node; the caller's session is told to place the call with the id the business server was given.
    @Test func aCallPlacedThroughANodeTheCallerIsNotOnReachesTheCaller() async throws {
        let (_, servers) = try await Self.nodes(["a", "b"])
        let caller = try await servers[0].loggedIn("4201")
        let callee = try await servers[1].loggedIn("4202")
        try await Self.waitOnline("4201", seenBy: callee)
        let callId = try servers[1].server.placeCall(PlaceCallOrder(caller: "4201", callee: "4202", media: .audio))
            .get()
        let frame = try await Self.frame(on: caller, "the order to place the call") {
            if case .placeCall = $0 { true } else { false }
        }
        #expect(frame == .placeCall(.init(callId: callId, callee: "4202", video: false)))
        for server in servers { try await server.stop() }
    }

    /// A node's `/metrics` says it is a member, how many users it sees elsewhere and how often it listened.
    @Test func aNodesMetricsShowItsMembershipAndTheUsersItSeesElsewhere() async throws {
        let (_, servers) = try await Self.nodes(["a", "b"])
        let observer = try await servers[0].loggedIn("4401")
        let other = try await servers[1].loggedIn("4402")
        try await Self.waitOnline("4402", seenBy: observer)
        let (status, metrics) = try await httpRequest("\(servers[0].httpBase)/metrics")
        #expect(status == 200)
        let lines = Set(metrics.split(separator: "\n").map(String.init))
        #expect(lines.contains("callapi_cluster_member 1.0"))
        #expect(lines.contains("callapi_cluster_remote_users 1.0"))
        #expect(lines.contains("callapi_cluster_listens_total 1"))
        #expect(lines.contains("callapi_cluster_write_failures_total 0"))
        other.close()
        for server in servers { try await server.stop() }
    }

    /// A message to another node goes from the notification of its write, without waiting for the mailbox's read
    /// (docs/scale-out.md, "Latency"), once each and in order; the read that follows deletes the rows.
    @Test func messagesToAnotherNodeAreDeliveredFromTheirNotificationOnceEachInOrder() async throws {
        let (url, servers) = try await Self.nodes(["a", "b"])
        let alice = try await servers[0].loggedIn("4601")
        let bob = try await servers[1].loggedIn("4602")
        try await Self.waitOnline("4602", seenBy: alice)
        for n in 1...20 { alice.send(.send(.init(id: n, to: "4602", body: "{\"n\":\(n)}"))) }
        var received: [String] = []
        while received.count < 20 {
            let frame = try await Self.frame(on: bob, "message \(received.count + 1)") {
                if case .message = $0 { true } else { false }
            }
            if case .message(let message) = frame { received.append(message.body) }
        }
        #expect(received == (1...20).map { "{\"n\":\($0)}" })
        let (_, metrics) = try await httpRequest("\(servers[1].httpBase)/metrics")
        let counted = metrics.split(separator: "\n").first {
            $0.hasPrefix("callapi_cluster_notified_deliveries_total ")
        }
        let notified = counted.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
        #expect(notified > 0, "\(counted.map(String.init) ?? "no counter")")
        // No second copy comes with the reads that delete the rows, and the mailbox empties.
        try await Task.sleep(for: .milliseconds(600))
        bob.send(.ping(.init(id: 99)))
        let next = try await Self.frame(on: bob, "the pong") {
            if case .message = $0 { true } else if case .pong = $0 { true } else { false }
        }
        if case .message(let late) = next { Issue.record("delivered again: \(late.body)") }
        let left = try await TestDatabase.count("SELECT count(*) FROM callapi_cluster_mailbox", url: url)
        #expect(left == 0)
        for server in servers { try await server.stop() }
    }
}
