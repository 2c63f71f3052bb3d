/// Constants of the RTC channel protocol: the media signaling relay of `callapi serve`.
///
/// One WebSocket on ``webSocketPath`` is one membership of one channel. Frames are UTF-8 JSON objects in text
/// messages with a `type` key; `docs/protocol.md` ("Channels") describes them.
public enum ChannelProtocol {
    /// The WebSocket path of the channel endpoint.
    public static let webSocketPath = "/v1/rtc"
    /// The `chn` claim of a token for any channel (accepted only when the server allows it).
    public static let anyChannel = "*"

    /// Whether `channel` is a valid channel name: 1 to 64 characters from `A-Z a-z 0-9 . _ -`.
    public static func isValidChannel(_ channel: String) -> Bool {
        SignalProtocol.isValidUserId(channel)
    }
}
