/// Constants of the signaling protocol between `callapi serve` and its clients.
///
/// Frames are UTF-8 JSON objects in WebSocket text messages, one frame per message, with a `type` key
/// saying what the frame is. `docs/protocol.md` describes every frame, field and error.
public enum SignalProtocol {
    /// The protocol version this library speaks; sent in `login` and `welcome`.
    public static let version = 1
    /// The WebSocket path the server listens on.
    public static let webSocketPath = "/v1/signal"
    /// The largest user id the server accepts, in characters.
    public static let maxUserIdLength = 64

    /// Whether `userId` is a valid user id: 1 to 64 characters from `A-Z a-z 0-9 . _ -`.
    public static func isValidUserId(_ userId: String) -> Bool {
        guard !userId.isEmpty, userId.utf8.count <= maxUserIdLength else { return false }
        return userId.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                return true
            default:
                return false
            }
        }
    }
}
