import CallAPISignalProtocol

/// The bytes a frame will take on the wire, estimated without encoding it: what the outbox limits count.
///
/// Strings are counted as JSON writes them (escapes included), so a body of control characters costs its real,
/// six-fold size; the fixed part of each frame is a generous constant.
enum FrameCost {
    /// The keys, punctuation and small fields of any frame.
    static let overhead = 160

    static func bytes(of frame: ServerFrame) -> Int {
        switch frame {
        case .message(let message):
            overhead + json(message.body) + json(message.from) + message.messageId.utf8.count
        case .answer(let answer):
            overhead + (answer.message.map(json) ?? 0)
        case .error(let error):
            overhead + json(error.message)
        case .closing(let closing):
            overhead + json(closing.message)
        case .presence(let presence):
            overhead + presence.online.reduce(0) { $0 + json($1) + 1 }
        case .heldResult(let result):
            overhead + json(result.to) + result.messageId.utf8.count
        case .matchQueue(let status):
            overhead + status.tags.reduce(0) { $0 + json($1) + 3 }
        case .matched(let match):
            overhead + json(match.peer) + json(match.tag) + match.matchId.utf8.count + match.callId.utf8.count
        default:
            overhead * 2
        }
    }

    static func bytes(of frame: ChannelServerFrame) -> Int {
        switch frame {
        case .signal(let signal): overhead + json(signal.data)
        case .joinFailed(let failure), .error(let failure), .removed(let failure): overhead + json(failure.message)
        case .signalFailed(let failed): overhead + json(failed.message)
        case .joined(let joined): overhead + json(joined.channel) + joined.members.count * 21
        default: overhead
        }
    }

    /// The length of `text` as a JSON string's contents: control characters become `\uXXXX`, quotes and
    /// backslashes are escaped.
    static func json(_ text: String) -> Int {
        // Native strings are walked as a buffer of bytes (the relayed body is counted for every frame that carries
        // it, and the buffer loop is several times faster than the view's).
        text.utf8.withContiguousStorageIfAvailable { json(bytes: $0) } ?? json(bytes: text.utf8)
    }

    private static func json(bytes: some Sequence<UInt8>) -> Int {
        var length = 0
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x08, 0x09, 0x0A, 0x0C, 0x0D: length += 2
            case 0..<0x20: length += 6
            default: length += 1
            }
        }
        return length
    }
}
