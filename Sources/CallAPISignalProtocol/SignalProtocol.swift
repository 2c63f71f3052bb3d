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

    /// Whether `userId` is a valid user id: 1 to 64 characters from `A-Z a-z 0-9 . _ -`; an id of digits only is
    /// a number and must be written in canonical decimal (`1001`, not `01001`), so that one user has one spelling
    /// (RTC uids are numbers, and a channel member's uid is matched against its token's user id as text).
    public static func isValidUserId(_ userId: String) -> Bool {
        // Read from the string's contiguous bytes: walking `utf8` checked each index (~270 instructions for a
        // four-digit id, on every relayed message).
        var userId = userId
        return userId.withUTF8(isValidUserId(utf8:))
    }

    private static func isValidUserId(utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !utf8.isEmpty, utf8.count <= maxUserIdLength else { return false }
        var digitsOnly = true
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                break
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "."),
                UInt8(ascii: "_"), UInt8(ascii: "-"):
                digitsOnly = false
            default:
                return false
            }
        }
        return !(digitsOnly && utf8.count > 1 && utf8.first == UInt8(ascii: "0"))
    }
}
