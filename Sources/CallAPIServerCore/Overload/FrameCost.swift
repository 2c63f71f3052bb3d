import CallAPISignalProtocol
import CallAPIWire

/// The bytes a frame will take on the wire, estimated without encoding it: what the outbox limits count.
///
/// Strings are counted as JSON writes them (escapes included), so a body of control characters costs its real,
/// six-fold size; the fixed part of each frame is a generous constant.
package enum FrameCost {
    /// The keys, punctuation and small fields of any frame.
    static let overhead = 160

    static func bytes(of frame: ServerFrame) -> Int {
        switch frame {
        case .message(let message):
            overhead + message.relayBody.escapedCount + json(message.from) + message.messageId.utf8.count
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
        case .joined(let joined):
            overhead + json(joined.channel) + joined.members.count * 21
                + joined.iceServers.reduce(0) { total, server in
                    total + overhead + server.urls.reduce(0) { $0 + json($1) + 3 } + json(server.username ?? "")
                        + json(server.credential ?? "")
                }
        default: overhead
        }
    }

    /// The length of `text` as a JSON string's contents: control characters become `\uXXXX`, quotes and
    /// backslashes are escaped (counted as ``JSONStringEscapes`` escapes them).
    static func json(_ text: String) -> Int {
        JSONStringEscapes.escapedLength(of: text)
    }
}
