import CallAPI
import NIOCore
import NIOPosix

/// One TCP connection to the broker, from CONNECT and SUBSCRIBE to its end: publishes awaiting their PUBACK,
/// received publishes handed on. ``MQTTSignalClient`` makes a new one for each (re)connect.
final class MQTTConnection: Sendable {
    /// What one connection needs to know.
    struct Parameters: Sendable {
        var host: String
        var port: Int
        var group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
        var connect: MQTTConnect
        var topic: String
        var handshakeTimeout: TimeAmount
    }

    private struct State {
        var channel: (any Channel)?
        var nextPacketId: UInt16 = 1
        var pending: [UInt16: @Sendable ((any Error)?) -> Void] = [:]
        var connack: CheckedContinuation<Void, any Error>?
        var suback: CheckedContinuation<Void, any Error>?
        var closed: (any Error)?
    }

    private let state = Locked(State())
    private let onPublish: @Sendable (MQTTPublish) -> Void
    private let onClose: @Sendable (any Error) -> Void

    private init(onPublish: @escaping @Sendable (MQTTPublish) -> Void, onClose: @escaping @Sendable (any Error) -> Void)
    {
        self.onPublish = onPublish
        self.onClose = onClose
    }

    /// Connects, logs in and subscribes to `parameters.topic` at QoS 1. `onClose` runs once when a connection
    /// that opened ends (not when opening fails: that is the thrown error).
    static func open(
        _ parameters: Parameters, onPublish: @escaping @Sendable (MQTTPublish) -> Void,
        onClose: @escaping @Sendable (any Error) -> Void
    ) async throws -> MQTTConnection {
        let opened = Locked(false)
        let connection = MQTTConnection(onPublish: onPublish) { error in
            if opened.withLock({ $0 }) { onClose(error) }
        }
        let channel = try await ClientBootstrap(group: parameters.group)
            .connectTimeout(parameters.handshakeTimeout)
            .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers([
                        ByteToMessageHandler(MQTTFrameDecoder()), MQTTInboundHandler(connection: connection),
                    ])
                }
            }
            .connect(host: parameters.host, port: parameters.port).get()
        connection.state.withLock { $0.channel = channel }
        let timeout = channel.eventLoop.scheduleTask(in: parameters.handshakeTimeout) {
            connection.closed(MQTTClientError.timedOut("CONNECT or SUBSCRIBE"))
            channel.close(promise: nil)
        }
        do {
            try await withCheckedThrowingContinuation { waiter in
                connection.expect(\.connack, waiter)
                connection.write(.connect(parameters.connect))
            }
            try await withCheckedThrowingContinuation { waiter in
                connection.expect(\.suback, waiter)
                connection.write(
                    .subscribe(packetId: 1, subscriptions: [MQTTSubscription(topicFilter: parameters.topic, qos: 1)]))
            }
        } catch {
            timeout.cancel()
            try? await channel.close()
            throw error
        }
        timeout.cancel()
        // Closed during the handshake's last moments: report it as a failed open, not a lost connection.
        let alreadyClosed: (any Error)? = connection.state.withLock { state in
            if state.closed == nil { opened.withLock { $0 = true } }
            return state.closed
        }
        if let alreadyClosed { throw alreadyClosed }
        let keepAlive = Int64(max(1, parameters.connect.keepAliveSeconds / 2))
        channel.eventLoop.scheduleRepeatedTask(initialDelay: .seconds(keepAlive), delay: .seconds(keepAlive)) { task in
            guard channel.isActive else { return task.cancel() }
            connection.write(.pingreq)
        }
        return connection
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

    /// Publishes at QoS 1; `completion` runs with `nil` at the PUBACK, or with the error that ended the
    /// connection first.
    func publish(topic: String, payload: [UInt8], completion: @escaping @Sendable ((any Error)?) -> Void) {
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
            write(.publish(MQTTPublish(topic: topic, payload: payload, qos: 1, packetId: packetId)))
        }
    }

    /// Why the connection ended, or nil while it is up.
    var closedError: (any Error)? { state.withLock { $0.closed } }

    /// Sends DISCONNECT and closes; `onClose` is not called for it.
    func close() async {
        let channel = state.withLock { state -> (any Channel)? in
            if state.closed == nil { state.closed = MQTTClientError.connectionClosed }
            return state.channel
        }
        failWaiters(MQTTClientError.connectionClosed)
        guard let channel else { return }
        try? await channel.writeAndFlush(ByteBuffer(bytes: MQTTCodec.encode(.disconnect)))
        try? await channel.close()
    }

    // MARK: - From the channel

    func received(_ packet: MQTTPacket) {
        switch packet {
        case .connack(_, let code):
            let waiter = state.withLock { state in
                defer { state.connack = nil }
                return state.connack
            }
            if code == 0 {
                waiter?.resume()
            } else {
                waiter?.resume(throwing: MQTTClientError.refused(returnCode: code))
            }
        case .suback(_, let codes):
            let waiter = state.withLock { state in
                defer { state.suback = nil }
                return state.suback
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
            onPublish(publish)
        case .connect, .subscribe, .pingreq, .pingresp, .disconnect:
            break
        }
    }

    /// The connection ended: every waiter and every unacknowledged publish fails, and `onClose` hears of it
    /// unless we closed it ourselves.
    func closed(_ error: any Error) {
        let first = state.withLock { state in
            defer { if state.closed == nil { state.closed = error } }
            return state.closed == nil
        }
        failWaiters(error)
        if first { onClose(error) }
    }

    private func failWaiters(_ error: any Error) {
        let (waiters, pending) = state.withLock { state in
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
}
