import CallAPI
import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import CallAPIMQTT

/// CallAPI's full calls over a real MQTT broker (Mosquitto), and the adapter's connection life.
@Suite("MQTT adapter over Mosquitto", .enabled(if: AdapterServices.mqttURL != nil, AdapterServices.noMQTT))
struct MQTTAdapterTests {
    static func flows(url: String) -> AdapterCallFlows {
        AdapterCallFlows { user in
            let client = MQTTSignalClient(configuration: try .init(url: url))
            try await client.login(userId: "\(user)")
            return (client, { await client.logout() })
        }
    }

    var flows: AdapterCallFlows { Self.flows(url: AdapterServices.mqttURL ?? "") }

    @Test func videoCallAcceptedThenHungUp() async throws { try await flows.videoCallAcceptedThenHungUp() }
    @Test func rejectedCall() async throws { try await flows.rejected() }
    @Test func busyCalleeRejectsAThirdUser() async throws { try await flows.busy() }

    @Test func sendsAreAcknowledgedByPubackAndFailClearlyWhenLoggedOut() async throws {
        let client = MQTTSignalClient(configuration: try .init(url: AdapterServices.mqttURL ?? ""))
        let events = ConnectionEvents()
        client.addConnectionListener(events)
        try await client.login(userId: "\(AdapterServices.users(1)[0])")
        try await events.next(.connected)
        #expect(client.isConnected)
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            client.sendMessage(userId: "1", message: "hello") { error in
                if let error { done.resume(throwing: error) } else { done.resume() }
            }
        }
        await #expect(throws: MQTTClientError.alreadyLoggedIn) { try await client.login(userId: "2") }
        await client.logout()
        let error = await withCheckedContinuation { (done: CheckedContinuation<(any Error)?, Never>) in
            client.sendMessage(userId: "1", message: "hello") { done.resume(returning: $0) }
        }
        #expect(error as? MQTTClientError == .notConnected)
    }

    /// A client given one event loop connects there: what it receives is heard on that loop's thread.
    @Test func aClientGivenAnEventLoopReceivesOnThatLoop() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        var configuration = try MQTTSignalClient.Configuration(url: AdapterServices.mqttURL ?? "")
        configuration.eventLoopGroup = loop
        let client = MQTTSignalClient(configuration: configuration)
        let (heard, onLoop) = AsyncStream<Bool>.makeStream()
        let listener = LoopCheckingListener { onLoop.yield(loop.inEventLoop) }
        client.addListener(listener: listener)
        let user = "\(AdapterServices.users(1)[0])"
        try await client.login(userId: user)
        // A user's topic is its inbox: a message to itself comes back.
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            client.sendMessage(userId: user, message: "to myself") { error in
                if let error { done.resume(throwing: error) } else { done.resume() }
            }
        }
        #expect(try await heard.first(within: 5, "the message to itself") { _ in true })
        await client.logout()
        try await group.shutdownGracefully()
    }

    @Test func tokenNearItsExpiryIsAnnounced() async throws {
        let client = MQTTSignalClient(configuration: try .init(url: AdapterServices.mqttURL ?? ""))
        let events = ConnectionEvents()
        client.addConnectionListener(events)
        // Within the default 30 s lead: announced at once.
        try await client.login(userId: "\(AdapterServices.users(1)[0])", token: "t1", tokenExpiresAt: Date() + 5)
        try await events.next(.tokenWillExpire)
        client.renewToken("t2", expiresAt: Date() + 10)
        try await events.next(.tokenWillExpire)
        await client.logout()
    }

    @Test func badURLIsAClearError() {
        #expect(throws: MQTTClientError.badURL("http://x")) { try MQTTSignalClient.Configuration(url: "http://x") }
        #expect((try? MQTTSignalClient.Configuration(url: "mqtt://h"))?.port == 1_883)
    }
}

/// A broker of the test's own (the mosquitto binary on a free loopback port): restarted mid-call, and locked
/// down by an ACL.
@Suite(
    "MQTT adapter with its own Mosquitto",
    .enabled(if: AdapterServices.mosquittoBinary != nil, AdapterServices.noMosquitto))
struct MQTTOwnBrokerTests {
    /// The broker restarts while the call is connected: both clients hear the disconnect, reconnect (and
    /// resubscribe) by themselves, and the call survives: a hangup afterwards ends it on both sides the usual
    /// way. (Messages in flight during the restart are lost with a non-persistent broker; CallAPI resends
    /// what it needs, and nothing is needed while connected.)
    @Test func callSurvivesABrokerRestart() async throws {
        let broker = try TestMosquitto.start()
        defer { broker.stop() }
        let url = "mqtt://127.0.0.1:\(broker.port)"
        let watchers = Locked<[ConnectionEvents]>([])
        let flows = AdapterCallFlows { user in
            let client = MQTTSignalClient(configuration: try .init(url: url))
            let events = ConnectionEvents()
            client.addConnectionListener(events)
            watchers.withLock { $0.append(events) }
            try await client.login(userId: "\(user)")
            try await events.next(.connected)
            return (client, { await client.logout() })
        }
        let users = AdapterServices.users(2)
        let caller = try await flows.endpoint(users[0])
        let callee = try await flows.endpoint(users[1])
        try await flows.ring(caller, callee)
        try await callee.api.accept(remoteUserId: caller.user)
        try await caller.reaches(.connected)
        try await callee.reaches(.connected)

        try broker.restart()
        for events in watchers.withLock({ $0 }) {
            try await events.next(.disconnected)
            try await events.next(.connected, within: 15)
        }
        #expect(caller.api.state == .connected)
        #expect(callee.api.state == .connected)

        try await callee.api.hangup(remoteUserId: caller.user)
        try await callee.reaches(.prepared, .localHangup)
        try await caller.reaches(.prepared, .remoteHangup)
        await caller.finish()
        await callee.finish()
    }

    /// The ACL docs/adapters.md recommends: a user reads only its own topic and writes to users' topics.
    @Test func aclLetsAUserReadOnlyItsOwnTopic() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("callapi-acl-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let acl = directory.appendingPathComponent("acl").path
        let rules = "pattern read callapi/u/%u\npattern write callapi/u/+\n"
        try rules.write(toFile: acl, atomically: true, encoding: .utf8)
        let broker = try TestMosquitto.start(extra: ["acl_file \(acl)"])
        defer { broker.stop() }
        let configuration = try MQTTSignalClient.Configuration(url: "mqtt://127.0.0.1:\(broker.port)")

        // Its own topic: allowed, and messages from another user arrive.
        let alice = MQTTSignalClient(configuration: configuration)
        let bob = MQTTSignalClient(configuration: configuration)
        try await alice.login(userId: "1")
        try await bob.login(userId: "2")
        let inbox = MessageInbox()
        bob.addListener(listener: inbox)
        alice.sendMessage(userId: "2", message: "to bob", completion: nil)
        #expect(try await inbox.messages.first(within: 5, "bob's message") { _ in true } == "to bob")

        // Someone else's topic: Mosquitto 2 grants an MQTT 3.1.1 subscription the ACL forbids (SUBACK 0) and
        // filters at delivery instead, so what counts is what reaches the snoop. User 1 subscribes to every
        // user's topic; alice (user 1's own publisher connection) sends to bob, then to user 1. Publishes from
        // one connection reach a subscriber in order, so if the first message the snoop gets is the one to
        // user 1, the one to bob was withheld.
        let snooped = AsyncStream<MQTTPublish>.makeStream()
        let snooping = MQTTConnection.Parameters(
            host: "127.0.0.1", port: broker.port,
            connect: MQTTConnect(clientId: "snoop", keepAliveSeconds: 30, username: "1"), topic: "callapi/u/+",
            handshakeTimeout: .seconds(5))
        let snoop = try await MQTTConnection.open(
            snooping, onPublish: { snooped.continuation.yield($0) }, onClose: { _ in })
        alice.sendMessage(userId: "2", message: "secret for bob", completion: nil)
        alice.sendMessage(userId: "1", message: "marker for user 1", completion: nil)
        let first = try await snooped.stream.first(within: 5, "the snoop's first message") { _ in true }
        #expect(first.topic == "callapi/u/1")
        #expect(String(decoding: first.payload, as: UTF8.self) == "marker for user 1")
        #expect(try await inbox.messages.first(within: 5, "bob's second message") { _ in true } == "secret for bob")
        await snoop.close()
        await alice.logout()
        await bob.logout()
    }
}

/// Streams the messages a signal client delivers.
final class MessageInbox: ISignalClientListener {
    let messages: AsyncStream<String>
    private let continuation: AsyncStream<String>.Continuation

    init() { (messages, continuation) = AsyncStream.makeStream() }

    func onMessageReceive(message: String) { continuation.yield(message) }
}

/// Calls `heard` for each message.
private final class LoopCheckingListener: ISignalClientListener {
    let heard: @Sendable () -> Void
    init(heard: @escaping @Sendable () -> Void) { self.heard = heard }
    func onMessageReceive(message: String) { heard() }
}
