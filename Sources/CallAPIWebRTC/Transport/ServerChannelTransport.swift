import CallAPI
import CallAPISignalClient
import CallAPISignalProtocol
import Logging

/// A ``WebRTCChannelTransport`` through a `callapi serve` server's RTC channels (`/v1/rtc`): one WebSocket
/// per membership, joined with a channel token the server signed; the server relays descriptions and
/// ICE candidates between the members and tells each who else is there.
///
/// Given the nodes of a cluster, a join that cannot reach one tries the next (from the one that last let it in),
/// as the signaling client fails over (docs/scale-out.md).
public struct ServerChannelTransport: WebRTCChannelTransport {
    /// The servers, as `ws://host:port` or `wss://host:port`, in the order they are tried.
    public let urls: [String]
    /// The first server.
    public var url: String { urls[0] }
    private let logger: Logger
    /// The index of the server that last let a member in: where the next join starts.
    private let preferred = Locked(0)

    /// A transport to the server at `url` (`ws://` or `wss://`).
    public init(url: String, logger: Logger = Logger(label: "callapi.webrtc.channel")) {
        self.init(urls: [url], logger: logger)
    }

    /// A transport to the nodes at `urls` (at least one).
    public init(urls: [String], logger: Logger = Logger(label: "callapi.webrtc.channel")) {
        precondition(!urls.isEmpty, "a channel transport needs a server")
        self.urls = urls
        self.logger = logger
    }

    public func join(
        channel: String, token: String, uid: UInt, device: String?,
        events: @escaping @Sendable (WebRTCChannelEvent) -> Void
    ) -> any WebRTCChannelMembership {
        let logger = logger
        let deliver: @Sendable (RTCChannelClientEvent) -> Void = { event in
            switch event {
            case .joined(let members, let iceServers): events(.joined(members: members, iceServers: iceServers))
            case .joinFailed(let code, let message): events(.joinFailed(code: code, message: message))
            case .memberJoined(let member): events(.memberJoined(member))
            case .memberLeft(let member, let reason): events(.memberLeft(member, reason: reason))
            case .tokenWillExpire: events(.tokenWillExpire)
            case .removed(let code, let message): events(.removed(code: code, message: message))
            case .signal(let from, let data):
                guard let signal = WebRTCSignal(jsonText: data) else {
                    logger.warning(
                        "ignored a media signal that does not parse",
                        metadata: ["channel": "\(channel)", "from": "\(from)", "bytes": "\(data.utf8.count)"])
                    return
                }
                events(.signal(from: from, signal))
            }
        }
        let membership = ServerChannelMembership(
            urls: urls, first: preferred.withLock { $0 }, preferred: preferred, channel: channel, uid: uid,
            device: device, token: token, deliver: deliver, logger: logger)
        membership.connect()
        return membership
    }
}

/// A membership of a ``ServerChannelTransport``: its WebSocket connection, moved to the next server while a join
/// cannot reach one.
private final class ServerChannelMembership: WebRTCChannelMembership {
    private struct State {
        var connection: RTCChannelConnection?
        /// The server being tried, and how many were tried before it for this join.
        var index: Int
        var tried = 0
        var joined = false
        var token: String
    }

    private let urls: [String]
    private let preferred: Locked<Int>
    private let channel: String
    private let uid: UInt
    private let device: String?
    private let deliver: @Sendable (RTCChannelClientEvent) -> Void
    private let logger: Logger
    private let state: Locked<State>

    init(
        urls: [String], first: Int, preferred: Locked<Int>, channel: String, uid: UInt, device: String?,
        token: String, deliver: @escaping @Sendable (RTCChannelClientEvent) -> Void, logger: Logger
    ) {
        self.urls = urls
        self.preferred = preferred
        self.channel = channel
        self.uid = uid
        self.device = device
        self.deliver = deliver
        self.logger = logger
        state = Locked(State(index: first % urls.count, token: token))
    }

    func connect() {
        let (index, token) = state.withLock { ($0.index, $0.token) }
        let connection = RTCChannelClient.join(
            url: urls[index], channel: channel, uid: uid, device: device, token: token
        ) { [weak self] event in self?.received(event, from: index) }
        state.withLock { $0.connection = connection }
    }

    private func received(_ event: RTCChannelClientEvent, from index: Int) {
        let next: Bool = state.withLock { state in
            guard state.index == index else { return false }
            switch event {
            case .joined:
                state.joined = true
                preferred.withLock { $0 = index }
                return false
            case .joinFailed(let code, _)
            where code == ChannelErrorCode.connectionLost.rawValue && !state.joined && state.tried + 1 < urls.count:
                state.tried += 1
                state.index = (index + 1) % urls.count
                return true
            default:
                return false
            }
        }
        guard next else {
            if state.withLock({ $0.index == index }) { deliver(event) }
            return
        }
        logger.info(
            "channel server unreachable: trying the next",
            metadata: ["channel": "\(channel)", "server": "\(urls[index])"])
        connect()
    }

    func send(_ signal: WebRTCSignal, to member: ChannelMember) {
        state.withLock { $0.connection }?.send(data: signal.jsonText, to: member)
    }

    func renewToken(_ token: String) {
        state.withLock { state in
            state.token = token
            return state.connection
        }?.renewToken(token)
    }

    func leave() { state.withLock { $0.connection }?.leave() }
}
