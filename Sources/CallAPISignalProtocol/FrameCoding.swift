import CallAPIWire

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The frame's head: every frame has a `type` and may have a request `id`.
private struct FrameHead: Decodable {
    var type: String?
    var id: Int?

    enum CodingKeys: String, CodingKey { case type, id }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        type = try? container.decodeIfPresent(String.self, forKey: .type)
        id = try? container.decodeIfPresent(Int.self, forKey: .id)
    }
}

private enum TypeKey: String, CodingKey { case type }

/// Encodes `payload`'s keys and `type` into one flat JSON object.
private struct Tagged<Payload: Encodable>: Encodable {
    var type: String
    var payload: Payload

    func encode(to encoder: any Encoder) throws {
        try payload.encode(to: encoder)
        var container = encoder.container(keyedBy: TypeKey.self)
        try container.encode(type, forKey: .type)
    }
}

/// Reading and writing frames as JSON text.
public enum FrameCoding {
    /// Decodes a client frame, or says precisely why the text is not one.
    public static func decodeClientFrame(_ text: String) -> Result<ClientFrame, FrameDecodingError> {
        if let frame = FrameFastPath.decodeClientFrame(text) { return .success(frame) }
        return decodeClientFrameGenerally(text)
    }

    /// Decodes a client frame from a text message's bytes, which must be valid UTF-8 (the server checks them as
    /// they come off the socket): read in place, with no `String` made of the whole frame unless the fast path
    /// leaves it to the general one.
    package static func decodeClientFrame(utf8: UnsafeBufferPointer<UInt8>) -> Result<ClientFrame, FrameDecodingError> {
        if let frame = FrameFastPath.decodeClientFrame(utf8: utf8) { return .success(frame) }
        return decodeClientFrameGenerally(String(decoding: utf8, as: UTF8.self))
    }

    /// Decodes a client frame with `JSONDecoder` (what the fast path must agree with).
    static func decodeClientFrameGenerally(_ text: String) -> Result<ClientFrame, FrameDecodingError> {
        decode(text) { type, data in
            guard let kind = ClientFrame.Kind(rawValue: type) else { return nil }
            return switch kind {
            case .login: .login(try decodePayload(data))
            case .send: .send(try decodePayload(data))
            case .renew: .renew(try decodePayload(data))
            case .users: .users(try decodePayload(data))
            case .subscribe: .subscribe(try decodePayload(data))
            case .unsubscribe: .unsubscribe(try decodePayload(data))
            case .ping: .ping(try decodePayload(data))
            case .logout: .logout(try decodePayload(data))
            case .calls: .calls(try decodePayload(data))
            case .report: .report(try decodePayload(data))
            case .registerDevice: .registerDevice(try decodePayload(data))
            case .devices: .devices(try decodePayload(data))
            case .removeDevice: .removeDevice(try decodePayload(data))
            case .invite: .invite(try decodePayload(data))
            case .invitationReceived: .invitationReceived(try decodePayload(data))
            case .cancelInvitation: .cancelInvitation(try decodePayload(data))
            case .acceptInvitation: .acceptInvitation(try decodePayload(data))
            case .refuseInvitation: .refuseInvitation(try decodePayload(data))
            case .acknowledgeAccept: .acknowledgeAccept(try decodePayload(data))
            case .matchEnter: .matchEnter(try decodePayload(data))
            case .matchLeave: .matchLeave(try decodePayload(data))
            }
        }
    }

    /// Decodes a server frame, or says precisely why the text is not one.
    public static func decodeServerFrame(_ text: String) -> Result<ServerFrame, FrameDecodingError> {
        if let frame = FrameFastPath.decodeServerFrame(text) { return .success(frame) }
        return decodeServerFrameGenerally(text)
    }

    /// Decodes a server frame from the bytes of a text message as they came off the socket, or says precisely
    /// why they are not one. ASCII text (nearly every frame) is read in place, with no `String` made of the whole
    /// frame; other text is decoded as UTF-8, invalid sequences replaced, and read as ``decodeServerFrame(_:)``
    /// reads it.
    package static func decodeServerFrame(utf8: UnsafeBufferPointer<UInt8>) -> Result<ServerFrame, FrameDecodingError> {
        guard UTF8Text.isASCII(utf8) else { return decodeServerFrame(String(decoding: utf8, as: UTF8.self)) }
        if let frame = FrameFastPath.decodeServerFrame(utf8: utf8) { return .success(frame) }
        // ASCII is UTF-8: decoding it repairs nothing.
        return decodeServerFrameGenerally(String(decoding: utf8, as: UTF8.self))
    }

    /// Decodes a server frame with `JSONDecoder` (what the fast path must agree with).
    static func decodeServerFrameGenerally(_ text: String) -> Result<ServerFrame, FrameDecodingError> {
        decode(text) { type, data in
            guard let kind = ServerFrame.Kind(rawValue: type) else { return nil }
            return switch kind {
            case .welcome: .welcome(try decodePayload(data))
            case .answer: .answer(try decodePayload(data))
            case .message: .message(try decodePayload(data))
            case .heldResult: .heldResult(try decodePayload(data))
            case .presence: .presence(try decodePayload(data))
            case .presenceChanged: .presenceChanged(try decodePayload(data))
            case .tokenWillExpire: .tokenWillExpire(try decodePayload(data))
            case .renewed: .renewed(try decodePayload(data))
            case .pong: .pong(try decodePayload(data))
            case .error: .error(try decodePayload(data))
            case .closing: .closing(try decodePayload(data))
            case .calls: .calls(try decodePayload(data))
            case .reported: .reported(try decodePayload(data))
            case .devices: .devices(try decodePayload(data))
            case .callWithdrawn: .callWithdrawn(try decodePayload(data))
            case .localInvitation: .localInvitation(try decodePayload(data))
            case .remoteInvitation: .remoteInvitation(try decodePayload(data))
            case .placeCall: .placeCall(try decodePayload(data))
            case .matched: .matched(try decodePayload(data))
            case .matchQueue: .matchQueue(try decodePayload(data))
            }
        }
    }

    /// The JSON text of a client frame.
    public static func encode(_ frame: ClientFrame) -> String {
        if let text = FrameFastPath.encode(frame) { return text }
        return encodeGenerally(frame)
    }

    /// The JSON text of a client frame, written by `JSONEncoder` (what the fast path must match byte for byte).
    static func encodeGenerally(_ frame: ClientFrame) -> String {
        switch frame {
        case .login(let p): encodeTagged(frame.type, p)
        case .send(let p): encodeTagged(frame.type, p)
        case .renew(let p): encodeTagged(frame.type, p)
        case .calls(let p): encodeTagged(frame.type, p)
        case .report(let p): encodeTagged(frame.type, p)
        case .users(let p), .subscribe(let p), .unsubscribe(let p), .ping(let p), .logout(let p), .devices(let p),
            .matchLeave(let p):
            encodeTagged(frame.type, p)
        case .registerDevice(let p): encodeTagged(frame.type, p)
        case .removeDevice(let p): encodeTagged(frame.type, p)
        case .invite(let p): encodeTagged(frame.type, p)
        case .invitationReceived(let p), .cancelInvitation(let p), .acknowledgeAccept(let p):
            encodeTagged(frame.type, p)
        case .acceptInvitation(let p), .refuseInvitation(let p): encodeTagged(frame.type, p)
        case .matchEnter(let p): encodeTagged(frame.type, p)
        }
    }

    /// The JSON text of a client frame as UTF-8 (what a socket writes).
    package static func encodeUTF8(_ frame: ClientFrame) -> [UInt8] {
        if let bytes = FrameFastPath.encodeUTF8(frame) { return bytes }
        return Array(encodeGenerally(frame).utf8)
    }

    /// The JSON text of a server frame as UTF-8 (what a socket writes).
    package static func encodeUTF8(_ frame: ServerFrame) -> [UInt8] {
        if let bytes = FrameFastPath.encodeUTF8(frame) { return bytes }
        return Array(encodeGenerally(frame).utf8)
    }

    /// The most `frame`'s text can take when it is written straight into memory made for it, by
    /// ``write(_:into:)-(ClientFrame,_)`` (the client writes it into the socket's buffer, after the WebSocket
    /// header); nil for a frame that is encoded as ``encodeUTF8(_:)-(ClientFrame)`` encodes it.
    package static func lengthBound(_ frame: ClientFrame) -> Int? {
        FrameFastPath.lengthBound(frame)
    }

    /// Writes the text of `frame`, a frame ``lengthBound(_:)-(ClientFrame)`` counted, from the start of `memory`,
    /// which must be at least that long, and gives the length of the text.
    package static func write(_ frame: ClientFrame, into memory: UnsafeMutableRawBufferPointer) -> Int {
        FrameFastPath.write(frame, into: memory)
    }

    /// The most `frame`'s text can take when it is written straight into memory made for it, by
    /// ``write(_:into:)-(ServerFrame,_)`` (the server writes it into the socket's buffer, after the WebSocket
    /// header); nil for a frame that is encoded as ``encodeUTF8(_:)-(ServerFrame)`` encodes it.
    ///
    /// A bound, not the length: it is counted without reading the frame's strings (``JSONLengthBound``).
    package static func lengthBound(_ frame: ServerFrame) -> Int? {
        FrameFastPath.lengthBound(frame)
    }

    /// Writes the text of `frame`, a frame ``lengthBound(_:)-(ServerFrame)`` counted, from the start of `memory`,
    /// which must be at least that long, and gives the length of the text.
    package static func write(_ frame: ServerFrame, into memory: UnsafeMutableRawBufferPointer) -> Int {
        FrameFastPath.write(frame, into: memory)
    }

    /// The JSON text of a server frame.
    public static func encode(_ frame: ServerFrame) -> String {
        if let text = FrameFastPath.encode(frame) { return text }
        return encodeGenerally(frame)
    }

    /// The JSON text of a server frame, written by `JSONEncoder` (what the fast path must match byte for byte).
    static func encodeGenerally(_ frame: ServerFrame) -> String {
        switch frame {
        case .welcome(let p): encodeTagged(frame.type, p)
        case .answer(let p): encodeTagged(frame.type, p)
        case .message(let p): encodeTagged(frame.type, p)
        case .heldResult(let p): encodeTagged(frame.type, p)
        case .presence(let p): encodeTagged(frame.type, p)
        case .presenceChanged(let p): encodeTagged(frame.type, p)
        case .tokenWillExpire(let p): encodeTagged(frame.type, p)
        case .renewed(let p): encodeTagged(frame.type, p)
        case .pong(let p): encodeTagged(frame.type, p)
        case .error(let p): encodeTagged(frame.type, p)
        case .closing(let p): encodeTagged(frame.type, p)
        case .calls(let p): encodeTagged(frame.type, p)
        case .reported(let p): encodeTagged(frame.type, p)
        case .devices(let p): encodeTagged(frame.type, p)
        case .callWithdrawn(let p): encodeTagged(frame.type, p)
        case .localInvitation(let p): encodeTagged(frame.type, p)
        case .remoteInvitation(let p): encodeTagged(frame.type, p)
        case .placeCall(let p): encodeTagged(frame.type, p)
        case .matched(let p): encodeTagged(frame.type, p)
        case .matchQueue(let p): encodeTagged(frame.type, p)
        }
    }

    static func encodeTagged<P: Encodable>(_ type: String, _ payload: P) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding these plain structs of strings and numbers cannot fail.
        let data = try! encoder.encode(Tagged(type: type, payload: payload))
        return String(decoding: data, as: UTF8.self)
    }

    static func decodePayload<P: Decodable>(_ data: Data) throws -> P {
        try JSONDecoder().decode(P.self, from: data)
    }

    static func decode<Frame>(
        _ text: String, payload: (String, Data) throws -> Frame?
    ) -> Result<Frame, FrameDecodingError> {
        let data = Data(text.utf8)
        let head: FrameHead
        do {
            head = try JSONDecoder().decode(FrameHead.self, from: data)
        } catch DecodingError.typeMismatch {
            return .failure(.init(code: .invalidFrame, message: "a frame must be a JSON object"))
        } catch {
            return .failure(.init(code: .malformedJSON, message: "the text is not valid JSON"))
        }
        guard let type = head.type else {
            return .failure(
                .init(code: .invalidFrame, message: "the frame has no \"type\" string", requestId: head.id))
        }
        do {
            guard let frame = try payload(type, data) else {
                return .failure(
                    .init(
                        code: .unknownType, message: "unknown frame type \"\(type)\"", requestId: head.id, type: type))
            }
            return .success(frame)
        } catch let error as DecodingError {
            return .failure(
                .init(
                    code: .invalidFrame, message: "\"\(type)\" frame: \(describe(error))", requestId: head.id,
                    type: type))
        } catch {
            return .failure(.init(code: .invalidFrame, message: "\(error)", requestId: head.id, type: type))
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context, _ key: (any CodingKey)? = nil) -> String {
            let keys = context.codingPath.map(\.stringValue) + (key.map { [$0.stringValue] } ?? [])
            return keys.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "missing field \"\(path(context, key))\""
        case .typeMismatch(let type, let context):
            return "field \"\(path(context))\" must be \(typeName(type))"
        case .valueNotFound(let type, let context):
            return "field \"\(path(context))\" must be \(typeName(type)), not null"
        case .dataCorrupted(let context):
            return "field \"\(path(context))\" is invalid"
        @unknown default:
            return "invalid"
        }
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Int64.Type: "an integer"
        case is UInt.Type: "a positive integer"
        case is Double.Type: "a number"
        case is Bool.Type: "a boolean"
        default: "\(type)"
        }
    }
}
