/// Reading and writing channel frames as JSON text.
public enum ChannelFrameCoding {
    private struct Empty: Codable {}

    /// Decodes a channel client frame, or says precisely why the text is not one.
    public static func decodeClientFrame(_ text: String) -> Result<ChannelClientFrame, FrameDecodingError> {
        FrameCoding.decode(text) { type, data in
            guard let kind = ChannelClientFrame.Kind(rawValue: type) else { return nil }
            return switch kind {
            case .join: .join(try FrameCoding.decodePayload(data))
            case .signal: .signal(try FrameCoding.decodePayload(data))
            case .renew: .renew(try FrameCoding.decodePayload(data))
            case .leave: .leave
            }
        }
    }

    /// Decodes a channel server frame, or says precisely why the text is not one.
    public static func decodeServerFrame(_ text: String) -> Result<ChannelServerFrame, FrameDecodingError> {
        FrameCoding.decode(text) { type, data in
            guard let kind = ChannelServerFrame.Kind(rawValue: type) else { return nil }
            return switch kind {
            case .joined: .joined(try FrameCoding.decodePayload(data))
            case .joinFailed: .joinFailed(try FrameCoding.decodePayload(data))
            case .memberJoined: .memberJoined(try FrameCoding.decodePayload(data))
            case .memberLeft: .memberLeft(try FrameCoding.decodePayload(data))
            case .signal: .signal(try FrameCoding.decodePayload(data))
            case .signalFailed: .signalFailed(try FrameCoding.decodePayload(data))
            case .tokenWillExpire: .tokenWillExpire(try FrameCoding.decodePayload(data))
            case .renewed: .renewed(try FrameCoding.decodePayload(data))
            case .error: .error(try FrameCoding.decodePayload(data))
            case .removed: .removed(try FrameCoding.decodePayload(data))
            }
        }
    }

    /// The JSON text of a channel client frame.
    public static func encode(_ frame: ChannelClientFrame) -> String {
        switch frame {
        case .join(let p): FrameCoding.encodeTagged(frame.type, p)
        case .signal(let p): FrameCoding.encodeTagged(frame.type, p)
        case .renew(let p): FrameCoding.encodeTagged(frame.type, p)
        case .leave: FrameCoding.encodeTagged(frame.type, Empty())
        }
    }

    /// The JSON text of a channel server frame.
    public static func encode(_ frame: ChannelServerFrame) -> String {
        switch frame {
        case .joined(let p): FrameCoding.encodeTagged(frame.type, p)
        case .joinFailed(let p), .error(let p), .removed(let p): FrameCoding.encodeTagged(frame.type, p)
        case .memberJoined(let p): FrameCoding.encodeTagged(frame.type, p)
        case .memberLeft(let p): FrameCoding.encodeTagged(frame.type, p)
        case .signal(let p): FrameCoding.encodeTagged(frame.type, p)
        case .signalFailed(let p): FrameCoding.encodeTagged(frame.type, p)
        case .tokenWillExpire(let p), .renewed(let p): FrameCoding.encodeTagged(frame.type, p)
        }
    }
}
