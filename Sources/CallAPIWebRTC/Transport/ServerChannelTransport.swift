import CallAPISignalClient
import CallAPISignalProtocol
import Logging

/// A ``WebRTCChannelTransport`` through a `callapi serve` server's RTC channels (`/v1/rtc`): one WebSocket
/// per membership, joined with a channel token the server signed; the server relays descriptions and
/// ICE candidates between the members and tells each who else is there.
public struct ServerChannelTransport: WebRTCChannelTransport {
    /// The server, as `ws://host:port` or `wss://host:port`.
    public let url: String
    private let logger: Logger

    /// A transport to the server at `url` (`ws://` or `wss://`).
    public init(url: String, logger: Logger = Logger(label: "callapi.webrtc.channel")) {
        self.url = url
        self.logger = logger
    }

    public func join(
        channel: String, token: String, uid: UInt, device: String?,
        events: @escaping @Sendable (WebRTCChannelEvent) -> Void
    ) -> any WebRTCChannelMembership {
        let logger = logger
        let connection = RTCChannelClient.join(
            url: url, channel: channel, uid: uid, device: device, token: token
        ) { event in
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
        return ServerChannelMembership(connection: connection)
    }
}

/// A membership of a ``ServerChannelTransport``: its WebSocket connection.
private struct ServerChannelMembership: WebRTCChannelMembership {
    let connection: RTCChannelConnection

    func send(_ signal: WebRTCSignal, to member: ChannelMember) { connection.send(data: signal.jsonText, to: member) }
    func renewToken(_ token: String) { connection.renewToken(token) }
    func leave() { connection.leave() }
}
