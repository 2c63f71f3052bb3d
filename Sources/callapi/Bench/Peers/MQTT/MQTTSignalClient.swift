import CallAPI
import Foundation
import NIOCore
import NIOPosix

/// CallAPI's signaling seam over an MQTT 3.1.1 broker: each user subscribes to its own topic
/// (`callapi/u/<user>`) at QoS 1, and a message to a user is a QoS 1 PUBLISH to that user's topic.
///
/// `sendMessage`'s completion runs when the broker's PUBACK arrives (the broker has taken the message, as our
/// server's acknowledgement says). MQTT does not tell who published a message, so listeners get
/// ``ISignalClientListener/onMessageReceive(message:)``.
final class MQTTSignalClient: BenchPeerClient {
    struct Endpoint: Sendable {
        var host = "127.0.0.1"
        var port = 1_883
    }

    private struct State {
        var channel: (any Channel)?
        var nextPacketId: UInt16 = 1
        var pending: [UInt16: @Sendable ((any Error)?) -> Void] = [:]
        var listeners: [WeakSignalListener] = []
        var connack: CheckedContinuation<Void, any Error>?
        var suback: CheckedContinuation<Void, any Error>?
        var closed: (any Error)?
    }

    static let keepAliveSeconds: UInt16 = 60
    static let handshakeTimeout = TimeAmount.seconds(5)

    let user: String
    private let state = Locked(State())

    private init(user: String) { self.user = user }

    static func topic(for user: String) -> String { "callapi/u/\(user)" }

    /// Connects as `user` (client id `callapi-<user>`, clean session) and subscribes to the user's topic.
    static func connect(user: String, to endpoint: Endpoint) async throws -> MQTTSignalClient {
        let client = MQTTSignalClient(user: user)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(3))
            .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers([
                        ByteToMessageHandler(MQTTFrameDecoder()), MQTTInboundHandler(client: client),
                    ])
                }
            }
            .connect(host: endpoint.host, port: endpoint.port).get()
        client.state.withLock { $0.channel = channel }
        let timeout = channel.eventLoop.scheduleTask(in: handshakeTimeout) {
            client.closed(MQTTClientError.timedOut("CONNECT or SUBSCRIBE"))
            channel.close(promise: nil)
        }
        do {
            try await withCheckedThrowingContinuation { waiter in
                client.expect(\.connack, waiter)
                client.write(
                    .connect(clientId: "callapi-\(user)", keepAliveSeconds: keepAliveSeconds, cleanSession: true))
            }
            try await withCheckedThrowingContinuation { waiter in
                client.expect(\.suback, waiter)
                client.write(
                    .subscribe(packetId: 1, subscriptions: [MQTTSubscription(topicFilter: topic(for: user), qos: 1)]))
            }
        } catch {
            timeout.cancel()
            try? await channel.close()
            throw error
        }
        timeout.cancel()
        channel.eventLoop.scheduleRepeatedTask(
            initialDelay: .seconds(Int64(keepAliveSeconds / 2)), delay: .seconds(Int64(keepAliveSeconds / 2))
        ) { task in
            guard channel.isActive else { return task.cancel() }
            client.write(.pingreq)
        }
        return client
    }

    /// Stores a handshake waiter, or fails it at once if the connection is already gone.
    private func expect(
        _ slot: WritableKeyPath<State, CheckedContinuation<Void, any Error>?>,
        _ waiter: CheckedContinuation<Void, any Error>
    ) {
        let closed: (any Error)? = state.withLock {
            if let error = $0.closed { return error }
            $0[keyPath: slot] = waiter
            return nil
        }
        if let closed { waiter.resume(throwing: closed) }
    }

    private func write(_ packet: MQTTPacket) {
        guard let channel = state.withLock({ $0.channel }) else { return }
        channel.writeAndFlush(ByteBuffer(bytes: MQTTCodec.encode(packet)), promise: nil)
    }

    // MARK: - From the channel

    func received(_ packet: MQTTPacket) {
        switch packet {
        case .connack(_, let code):
            let waiter = state.withLock { state in
                defer { state.connack = nil }; return state.connack
            }
            if code == 0 {
                waiter?.resume()
            } else {
                waiter?.resume(throwing: MQTTClientError.refused(returnCode: code))
            }
        case .suback(_, let codes):
            let waiter = state.withLock { state in
                defer { state.suback = nil }; return state.suback
            }
            if codes.contains(0x80) {
                waiter?.resume(throwing: MQTTClientError.subscriptionRefused)
            } else {
                waiter?.resume()
            }
        case .puback(let packetId):
            state.withLock { $0.pending.removeValue(forKey: packetId) }?(nil)
        case .publish(let publish):
            if publish.qos > 0, let packetId = publish.packetId { write(.puback(packetId: packetId)) }
            let message = String(decoding: publish.payload, as: UTF8.self)
            for listener in state.withLock({ $0.listeners.compactMap(\.listener) }) {
                listener.onMessageReceive(message: message)
            }
        case .connect, .subscribe, .pingreq, .pingresp, .disconnect:
            break
        }
    }

    /// The connection ended: every waiter and every unacknowledged publish fails.
    func closed(_ error: any Error) {
        let (waiters, pending) = state.withLock { state in
            if state.closed == nil { state.closed = error }
            defer {
                state.connack = nil
                state.suback = nil
                state.pending = [:]
            }
            return ([state.connack, state.suback].compactMap { $0 }, Array(state.pending.values))
        }
        for waiter in waiters { waiter.resume(throwing: error) }
        for completion in pending { completion(error) }
    }

    // MARK: - ISignalClient

    func sendMessage(userId: String, message: String, completion: (@Sendable ((any Error)?) -> Void)?) {
        let completion = completion ?? { _ in }
        let outcome: Result<UInt16, any Error> = state.withLock { state in
            if let error = state.closed { return .failure(error) }
            guard state.pending.count < Int(UInt16.max) else { return .failure(MQTTClientError.tooManyInFlight) }
            var packetId = state.nextPacketId
            while state.pending[packetId] != nil { packetId = packetId == UInt16.max ? 1 : packetId + 1 }
            state.nextPacketId = packetId == UInt16.max ? 1 : packetId + 1
            state.pending[packetId] = completion
            return .success(packetId)
        }
        switch outcome {
        case .failure(let error):
            completion(error)
        case .success(let packetId):
            write(
                .publish(
                    MQTTPublish(
                        topic: Self.topic(for: userId), payload: Array(message.utf8), qos: 1, packetId: packetId)))
        }
    }

    func addListener(listener: any ISignalClientListener) {
        state.withLock { state in
            state.listeners.removeAll { $0.listener == nil || $0.listener === listener }
            state.listeners.append(WeakSignalListener(listener: listener))
        }
    }

    func removeListener(listener: any ISignalClientListener) {
        state.withLock { $0.listeners.removeAll { $0.listener == nil || $0.listener === listener } }
    }

    // MARK: - BenchPeerClient

    /// Sends DISCONNECT and closes the connection.
    func close() async {
        guard let channel = state.withLock({ $0.channel }) else { return }
        try? await channel.writeAndFlush(ByteBuffer(bytes: MQTTCodec.encode(.disconnect)))
        try? await channel.close()
    }
}
