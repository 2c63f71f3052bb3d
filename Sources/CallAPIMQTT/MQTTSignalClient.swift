import CallAPI
import Foundation
import NIOCore
import NIOPosix

/// CallAPI's signaling seam over any MQTT 3.1.1 broker (Mosquitto, EMQX, HiveMQ, …; MQTT 5 brokers accept
/// 3.1.1 clients too): each user subscribes to its own topic (`callapi/u/<user>` by default) at QoS 1, and a
/// message to a user is a QoS 1 PUBLISH to that user's topic.
///
/// The shape is the seeds' IM-backed signal client: ``login(userId:token:tokenExpiresAt:)``, ``logout()``,
/// ``renewToken(_:expiresAt:)`` and an ``ISignalConnectionListener``. `sendMessage`'s completion runs when
/// the broker's PUBACK arrives (the broker has taken the message). A lost connection is reconnected by
/// itself (clean session, the subscription made again), with the listener told both ways; sends while
/// disconnected fail at once with ``MQTTClientError/notConnected``.
///
/// - Important: MQTT does not vouch for senders: any client allowed to publish to a user's topic can claim
///   to be anyone, and listeners get ``ISignalClientListener/onMessageReceive(message:)`` (no
///   ``SignalSender``), so CallAPI trusts the ids in the message body. Lock the broker down: authenticate
///   clients (the user id is the MQTT user name, the token its password) and give it an ACL under which a
///   user reads only its own topic (`pattern read callapi/u/%u`) and writes only to users' topics
///   (`pattern write callapi/u/+`). docs/adapters.md has a Mosquitto configuration.
public final class MQTTSignalClient: ISignalClient {
    /// Where the broker is and how the client behaves.
    public struct Configuration: Sendable {
        public var host: String
        public var port: Int
        /// Each user's topic is this prefix followed by the user id.
        public var topicPrefix = "callapi/u/"
        /// The event loops the client's connections may run on; pass a single `EventLoop` to choose which.
        /// SwiftNIO's shared group by default.
        public var eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
        /// MQTT keep-alive; the client pings at half of it.
        public var keepAliveSeconds: UInt16 = 30
        /// The bound on connecting, CONNACK and SUBACK together.
        public var connectTimeoutSeconds: Int64 = 5
        /// Waits before each reconnect attempt; the last repeats until the client is connected or logged out.
        public var reconnectDelaysMillis: [Int64] = [100, 250, 500, 1_000, 2_000]
        /// How long before the token's expiry ``ISignalConnectionListener/onTokenPrivilegeWillExpire()``
        /// is called.
        public var tokenWillExpireLeadSeconds: Double = 30

        public init(host: String = "127.0.0.1", port: Int = 1_883) {
            self.host = host
            self.port = port
        }

        /// `mqtt://host[:port]`; the port defaults to 1883.
        public init(url: String) throws {
            guard let components = URLComponents(string: url), components.scheme == "mqtt",
                let host = components.host, !host.isEmpty
            else { throw MQTTClientError.badURL(url) }
            self.init(host: host, port: components.port ?? 1_883)
        }
    }

    private enum Phase {
        case loggedOut
        /// Logged in; `connection` is nil between a lost connection and the reconnect.
        case loggedIn(Session)
    }

    private struct Session {
        var userId: String
        var clientId: String
        var token: String?
        var connection: MQTTConnection?
        var reconnect: Task<Void, Never>?
    }

    private struct State {
        var phase = Phase.loggedOut
        var listeners = SignalAdapterListeners()
    }

    public let configuration: Configuration
    private let state = Locked(State())
    /// Who hears received messages; what arrives before CallAPI adds its listener is kept for it.
    private let messageListeners = SignalMessageListeners()
    private let alarm = TokenExpiryAlarm()

    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// The topic a user receives on.
    public func topic(for userId: String) -> String { configuration.topicPrefix + userId }

    /// Whether the client is logged in and its connection is up.
    public var isConnected: Bool {
        state.withLock { state in
            if case .loggedIn(let session) = state.phase { return session.connection != nil }
            return false
        }
    }

    /// Connects as `userId` (the MQTT user name; `token`, if any, is the password), subscribes to the user's
    /// topic, and tells the connection listeners ``ISignalConnectionListener/onConnected()``. Throws
    /// ``MQTTClientError`` (refused, timed out) or the socket's error; the client stays logged out then.
    public func login(userId: String, token: String? = nil, tokenExpiresAt: Date? = nil) async throws {
        let clientId = "callapi-\(userId)-\(UInt32.random(in: 0...UInt32.max))"
        let taken = state.withLock { state in
            if case .loggedIn = state.phase { return true }
            state.phase = .loggedIn(Session(userId: userId, clientId: clientId, token: token))
            return false
        }
        guard !taken else { throw MQTTClientError.alreadyLoggedIn }
        let connection: MQTTConnection
        do {
            connection = try await open(userId: userId, clientId: clientId, token: token)
            let kept = state.withLock { state in
                guard case .loggedIn(var session) = state.phase, session.clientId == clientId else { return false }
                session.connection = connection
                state.phase = .loggedIn(session)
                return true
            }
            guard kept else {
                await connection.close()
                throw MQTTClientError.notConnected
            }
        } catch {
            state.withLock { state in
                if case .loggedIn(let session) = state.phase, session.clientId == clientId { state.phase = .loggedOut }
            }
            throw error
        }
        armAlarm(expiresAt: tokenExpiresAt)
        for listener in connectionListeners { listener.onConnected() }
        if let error = connection.closedError { lost(clientId: clientId, error: error) }
    }

    /// Sends DISCONNECT and stops reconnecting. Unacknowledged sends fail with
    /// ``MQTTClientError/connectionClosed``.
    public func logout() async {
        alarm.cancel()
        let session: Session? = state.withLock { state in
            guard case .loggedIn(let session) = state.phase else { return nil }
            state.phase = .loggedOut
            return session
        }
        session?.reconnect?.cancel()
        await session?.connection?.close()
    }

    /// A new token (MQTT password) for the next connect: MQTT 3.1.1 cannot re-authenticate a live
    /// connection, and brokers check credentials only at CONNECT. `expiresAt` re-arms
    /// ``ISignalConnectionListener/onTokenPrivilegeWillExpire()``.
    public func renewToken(_ token: String, expiresAt: Date? = nil) {
        state.withLock { state in
            guard case .loggedIn(var session) = state.phase else { return }
            session.token = token
            state.phase = .loggedIn(session)
        }
        armAlarm(expiresAt: expiresAt)
    }

    public func addConnectionListener(_ listener: any ISignalConnectionListener) {
        state.withLock { $0.listeners.add(listener) }
    }

    public func removeConnectionListener(_ listener: any ISignalConnectionListener) {
        state.withLock { $0.listeners.remove(listener) }
    }

    // MARK: - ISignalClient

    public func sendMessage(userId: String, message: String, completion: (@Sendable ((any Error)?) -> Void)?) {
        let connection: MQTTConnection? = state.withLock { state in
            if case .loggedIn(let session) = state.phase { return session.connection }
            return nil
        }
        guard let connection else {
            completion?(MQTTClientError.notConnected)
            return
        }
        connection.publish(topic: topic(for: userId), payload: Array(message.utf8)) { completion?($0) }
    }

    public func addListener(listener: any ISignalClientListener) {
        messageListeners.add(listener)
    }

    public func removeListener(listener: any ISignalClientListener) {
        messageListeners.remove(listener)
    }

    // MARK: - Connections

    private var connectionListeners: [any ISignalConnectionListener] {
        state.withLock { $0.listeners.connectionListeners }
    }

    private func armAlarm(expiresAt: Date?) {
        alarm.set(expiresAt: expiresAt, leadSeconds: configuration.tokenWillExpireLeadSeconds) { [weak self] in
            for listener in self?.connectionListeners ?? [] { listener.onTokenPrivilegeWillExpire() }
        }
    }

    private func open(userId: String, clientId: String, token: String?) async throws -> MQTTConnection {
        let parameters = MQTTConnection.Parameters(
            host: configuration.host, port: configuration.port, group: configuration.eventLoopGroup,
            connect: MQTTConnect(
                clientId: clientId, keepAliveSeconds: configuration.keepAliveSeconds, cleanSession: true,
                username: userId, password: token),
            topic: topic(for: userId), handshakeTimeout: .seconds(configuration.connectTimeoutSeconds))
        return try await MQTTConnection.open(
            parameters,
            onPublish: { [weak self] publish in self?.deliver(publish) },
            onClose: { [weak self] error in self?.lost(clientId: clientId, error: error) })
    }

    private func deliver(_ publish: MQTTPublish) {
        let message = String(decoding: publish.payload, as: UTF8.self)
        messageListeners.deliver(message)
    }

    /// The connection of login `clientId` ended by itself: tell the listeners and reconnect.
    private func lost(clientId: String, error: any Error) {
        let reconnecting = state.withLock { state in
            guard case .loggedIn(var session) = state.phase, session.clientId == clientId,
                session.connection != nil
            else { return false }
            session.connection = nil
            session.reconnect = Task { [weak self] in await self?.reconnect(clientId: clientId) }
            state.phase = .loggedIn(session)
            return true
        }
        guard reconnecting else { return }
        for listener in connectionListeners { listener.onDisconnected(error: error) }
    }

    private func reconnect(clientId: String) async {
        var attempt = 0
        while !Task.isCancelled {
            let delays = configuration.reconnectDelaysMillis
            let delay = delays.isEmpty ? 1_000 : delays[min(attempt, delays.count - 1)]
            attempt += 1
            try? await Task.sleep(for: .milliseconds(delay))
            let current: Session? = state.withLock { state in
                guard case .loggedIn(let session) = state.phase, session.clientId == clientId else { return nil }
                return session
            }
            guard let current, !Task.isCancelled else { return }
            guard let connection = try? await open(userId: current.userId, clientId: clientId, token: current.token)
            else { continue }
            let kept = state.withLock { state in
                guard case .loggedIn(var session) = state.phase, session.clientId == clientId else { return false }
                session.connection = connection
                session.reconnect = nil
                state.phase = .loggedIn(session)
                return true
            }
            guard kept else {
                await connection.close()
                return
            }
            for listener in connectionListeners { listener.onConnected() }
            if let error = connection.closedError { lost(clientId: clientId, error: error) }
            return
        }
    }
}
