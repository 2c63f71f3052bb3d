import CallAPISignalProtocol
import Logging

/// Joins RTC channels on `callapi serve` (`/v1/rtc`): the media signaling relay of a WebRTC engine.
///
/// ```swift
/// let connection = RTCChannelClient.join(
///     url: "ws://127.0.0.1:8080", channel: "call-7f3a", uid: 1001, token: rtcToken
/// ) { event in
///     switch event {
///     case .joined(let members, _): print("in the channel with", members)
///     case .signal(let from, let data): engine.apply(data, from: from)
///     default: break
///     }
/// }
/// connection.send(data: offer, to: ChannelMember(uid: 1002, device: "phone-1"))
/// ```
public enum RTCChannelClient {
    /// Starts joining `channel` as `uid` on `device` with an RTC token for it, and returns at once.
    ///
    /// - Parameters:
    ///   - url: The server, `ws(s)://host:port` (`/v1/rtc` is added when there is no path; `http(s)` works too).
    ///   - device: The device this member joins from (the rules of a push device id). A user's devices are separate
    ///     members; without one, a second join of the uid replaces the first.
    ///   - events: Called serially, in the server's order: first ``RTCChannelClientEvent/joined(members:iceServers:)`` or
    ///     ``RTCChannelClientEvent/joinFailed(code:message:)``, and nothing after
    ///     ``RTCChannelClientEvent/removed(code:message:)`` or ``RTCChannelConnection/leave()``.
    /// - Returns: The membership. Keep it: releasing it leaves the channel.
    public static func join(
        url: String, channel: String, uid: UInt, device: String? = nil, token: String,
        logger: Logger = Logger(label: "callapi.rtc-channel"),
        events: @escaping @Sendable (RTCChannelClientEvent) -> Void
    ) -> RTCChannelConnection {
        RTCChannelConnection(
            url: joinURL(from: url, channel: channel), channel: channel, uid: uid, device: device, token: token,
            logger: logger,
            events: events)
    }

    /// The URL a member of `channel` connects to: ``webSocketURL(from:)`` with the channel in its query, which the
    /// server ignores and a proxy in front of a cluster hashes, so that every member of a channel reaches the same
    /// node (docs/scale-out.md).
    public static func joinURL(from url: String, channel: String) -> String {
        let base = webSocketURL(from: url)
        return base + (base.contains("?") ? "&" : "?") + "channel=" + channel
    }

    /// `url` with the channel path added when it has none, and `http(s)` turned into `ws(s)`.
    public static func webSocketURL(from url: String) -> String {
        WebSocketURL.make(from: url, defaultPath: ChannelProtocol.webSocketPath)
    }
}
