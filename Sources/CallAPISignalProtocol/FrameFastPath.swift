import CallAPIWire

/// The frames sent at high rates (`send`, `message`, `answer`, `ping`, `pong`), read and written without
/// Foundation's coders. Reading gives nil for anything it is not sure of, and ``FrameCoding`` then decodes the
/// text the general way, so results and error messages are the same as the general path's.
enum FrameFastPath {
    static func decodeClientFrame(_ text: String) -> ClientFrame? {
        var text = text
        return text.withUTF8 { decodeClientFrame(utf8: $0) }
    }

    /// ``decodeClientFrame(_:)`` over valid UTF-8 bytes.
    static func decodeClientFrame(utf8 text: UnsafeBufferPointer<UInt8>) -> ClientFrame? {
        // Picked, not read whole: only the members these two frames have are built, each key is compared as
        // bytes, and the general decoder ignores the other members too.
        // A send's body is kept escaped: the server writes it into the relayed message as it came.
        FlatJSONObject.withPicked(
            clientKeys, fromUTF8: text, keepingEscaped: 1 << UInt64(ClientKey.body.rawValue)
        ) { values in
            guard case .string(let type)? = values[ClientKey.type.rawValue] else { return nil }
            // Moved out of their slots, not copied (each member is read once).
            func value(_ key: ClientKey) -> FlatJSONObject.Value? { values[key.rawValue].take() }
            // Matched against the kinds' raw values, not read with `Kind(rawValue:)`: that search of every case
            // cost ~500 instructions per frame here (callgrind, scripts/bench-frame-coding.sh --instructions).
            switch type {
            case ClientFrame.Kind.send.rawValue:
                guard case .int(let wideId)? = value(.id), let id = Int(exactly: wideId),
                    case .string(let to)? = value(.to), case .escapedString(let body)? = value(.body),
                    let ttl = value(.ttl).optionalInt, let copy = value(.copy).optionalBool,
                    let pushObject = value(.push).optionalObject
                else { return nil }
                var push: PushMark?
                if let pushObject {
                    guard let mark = pushMark(pushObject) else { return nil }
                    push = mark
                }
                return .send(
                    .init(
                        id: id, to: to, relayBody: MessageBody(checkedEscaped: body), ttl: ttl, push: push,
                        copy: copy))
            case ClientFrame.Kind.ping.rawValue:
                guard let id = value(.id).optionalInt else { return nil }
                return .ping(.init(id: id))
            default:
                return nil
            }
        }
    }

    /// The members of the client frames read here, by their place in ``clientKeys``.
    private enum ClientKey: Int, CaseIterable {
        case type, id, to, body, ttl, copy, push
    }

    private static let clientKeys = JSONKeys(
        ClientKey.allCases.map { key -> StaticString in
            switch key {
            case .type: "type"
            case .id: "id"
            case .to: "to"
            case .body: "body"
            case .ttl: "ttl"
            case .copy: "copy"
            case .push: "push"
            }
        })

    /// A send's push mark (docs/push.md), as its `Codable` conformance reads it.
    private static func pushMark(_ object: FlatJSONObject) -> PushMark? {
        guard let kind = object.string("kind").flatMap(PushMark.Kind.init(rawValue:)),
            let callId = object.string("callId"), let callerName = object.optionalString("callerName"),
            let video = object.optionalBool("video"), let reasonText = object.optionalString("reason")
        else { return nil }
        var reason: PushMark.Reason?
        if let reasonText {
            guard let known = PushMark.Reason(rawValue: reasonText) else { return nil }
            reason = known
        }
        return PushMark(kind: kind, callId: callId, callerName: callerName, video: video, reason: reason)
    }

    static func decodeServerFrame(_ text: String) -> ServerFrame? {
        var text = text
        return text.withUTF8 { decodeServerFrame(utf8: $0) }
    }

    /// ``decodeServerFrame(_:)`` over valid UTF-8 bytes.
    static func decodeServerFrame(utf8 text: UnsafeBufferPointer<UInt8>) -> ServerFrame? {
        // Picked as client frames are: only these frames' members are built.
        FlatJSONObject.withPicked(serverKeys, fromUTF8: text) { values in
            guard case .string(let type)? = values[ServerKey.type.rawValue] else { return nil }
            // Moved out of their slots, not copied (each member is read once).
            func value(_ key: ServerKey) -> FlatJSONObject.Value? { values[key.rawValue].take() }
            switch type {
            case ServerFrame.Kind.message.rawValue:
                guard case .string(let from)? = value(.from), case .string(let body)? = value(.body),
                    case .int(let sentAt)? = value(.sentAt), case .string(let messageId)? = value(.messageId),
                    let held = value(.held).optionalBool, let to = value(.to).optionalString
                else { return nil }
                return .message(
                    .init(from: from, body: body, sentAt: sentAt, messageId: messageId, held: held, to: to))
            case ServerFrame.Kind.answer.rawValue:
                guard let id = value(.id).optionalInt, case .string(let resultText)? = value(.result),
                    let result = SendResult(rawValue: resultText), let reasonText = value(.reason).optionalString,
                    let message = value(.message).optionalString, let messageId = value(.messageId).optionalString,
                    let sessions = value(.sessions).optionalInt, let ttl = value(.ttl).optionalInt
                else { return nil }
                let reason = reasonText.map { SignalErrorCode(rawValue: $0) ?? .unknown }
                return .answer(
                    .init(
                        id: id, result: result, reason: reason, message: message, messageId: messageId,
                        sessions: sessions, ttl: ttl))
            case ServerFrame.Kind.pong.rawValue:
                guard let id = value(.id).optionalInt, case .int(let serverTime)? = value(.serverTime) else {
                    return nil
                }
                return .pong(.init(id: id, serverTime: serverTime))
            default:
                return nil
            }
        }
    }

    /// The members of the server frames read here, by their place in ``serverKeys``.
    private enum ServerKey: Int, CaseIterable {
        case type, id, from, body, sentAt, messageId, held, to, result, reason, message, sessions, ttl, serverTime
    }

    private static let serverKeys = JSONKeys(
        ServerKey.allCases.map { key -> StaticString in
            switch key {
            case .type: "type"
            case .id: "id"
            case .from: "from"
            case .body: "body"
            case .sentAt: "sentAt"
            case .messageId: "messageId"
            case .held: "held"
            case .to: "to"
            case .result: "result"
            case .reason: "reason"
            case .message: "message"
            case .sessions: "sessions"
            case .ttl: "ttl"
            case .serverTime: "serverTime"
            }
        })

    /// The text of `frame` when it is one of the fast frames, keys sorted as the general encoder sorts them.
    static func encode(_ frame: ClientFrame) -> String? {
        encodeUTF8(frame).map { String(decoding: $0, as: UTF8.self) }
    }

    /// ``encode(_:)-(ClientFrame)`` as UTF-8 bytes: counted, then written into an array of that length.
    static func encodeUTF8(_ frame: ClientFrame) -> [UInt8]? {
        guard let count = write(frame, into: JSONLength())?.count else { return nil }
        return bytes(count: count) { memory in fill(memory) { write(frame, into: $0) } }
    }

    /// `frame`'s members written into `output` when it is one of the fast frames; nil otherwise.
    static func write<Output: JSONOutput>(_ frame: ClientFrame, into output: consuming Output) -> Output? {
        switch frame {
        case .send(let send):
            var writer = JSONObjectWriter(into: output)
            writer.member("body", send.relayBody)
            writer.member("copy", send.copy)
            writer.member("id", send.id)
            if let push = send.push {
                writer.member("push") { mark in
                    mark.member("callId", push.callId)
                    mark.member("callerName", push.callerName)
                    mark.member("kind", push.kind.rawValue)
                    mark.member("reason", push.reason?.rawValue)
                    mark.member("video", push.video)
                }
            }
            writer.member("to", send.to)
            writer.member("ttl", send.ttl)
            writer.member("type", ClientFrame.Kind.send.rawValue)
            return writer.finish()
        case .ping(let request):
            var writer = JSONObjectWriter(into: output)
            writer.member("id", request.id)
            writer.member("type", ClientFrame.Kind.ping.rawValue)
            return writer.finish()
        default:
            return nil
        }
    }

    /// The text of `frame` when it is one of the fast frames, keys sorted as the general encoder sorts them.
    static func encode(_ frame: ServerFrame) -> String? {
        encodeUTF8(frame).map { String(decoding: $0, as: UTF8.self) }
    }

    /// ``encode(_:)-(ServerFrame)`` as UTF-8 bytes: counted, then written into an array of that length.
    static func encodeUTF8(_ frame: ServerFrame) -> [UInt8]? {
        guard let count = write(frame, into: JSONLength())?.count else { return nil }
        return bytes(count: count) { memory in fill(memory) { write(frame, into: $0) } }
    }

    /// The most `frame`'s text can take (``JSONLengthBound``) when it is a fast frame; nil otherwise.
    static func lengthBound(_ frame: ClientFrame) -> Int? {
        write(frame, into: JSONLengthBound())?.count
    }

    /// Writes `frame`, a fast frame, from the start of `memory`, which must be at least its ``lengthBound(_:)``
    /// long, and gives the length written.
    static func write(_ frame: ClientFrame, into memory: UnsafeMutableRawBufferPointer) -> Int {
        written(into: memory) { write(frame, into: $0) }
    }

    /// The most `frame`'s text can take (``JSONLengthBound``) when it is a fast frame; nil otherwise.
    static func lengthBound(_ frame: ServerFrame) -> Int? {
        write(frame, into: JSONLengthBound())?.count
    }

    /// Writes `frame`, a fast frame, from the start of `memory`, which must be at least its ``lengthBound(_:)``
    /// long, and gives the length written.
    static func write(_ frame: ServerFrame, into memory: UnsafeMutableRawBufferPointer) -> Int {
        written(into: memory) { write(frame, into: $0) }
    }

    /// The length `write` wrote from the start of `memory` (nil from it: not a fast frame, which stops the program).
    private static func written(
        into memory: UnsafeMutableRawBufferPointer, _ write: (JSONMemory) -> JSONMemory?
    ) -> Int {
        guard let written = write(JSONMemory(memory))?.written else {
            preconditionFailure("a frame written in place that is not a fast frame")
        }
        return written
    }

    /// An array of `count` bytes, all written by `write`.
    private static func bytes(count: Int, _ write: (UnsafeMutableRawBufferPointer) -> Void) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { bytes, initialized in
            write(UnsafeMutableRawBufferPointer(bytes))
            initialized = count
        }
    }

    /// Writes a frame into `memory` through `write`, which must fill it exactly (nil: not a fast frame).
    private static func fill(
        _ memory: UnsafeMutableRawBufferPointer, _ write: (JSONMemory) -> JSONMemory?
    ) {
        precondition(
            write(JSONMemory(memory))?.written == memory.count, "a frame written at another length than counted")
    }

    /// `frame`'s members written into `output` when it is one of the fast frames; nil otherwise.
    static func write<Output: JSONOutput>(_ frame: ServerFrame, into output: consuming Output) -> Output? {
        switch frame {
        case .message(let message):
            var writer = JSONObjectWriter(into: output)
            writer.member("body", message.relayBody)
            writer.member("from", message.from)
            writer.member("held", message.held)
            writer.member("messageId", message.messageId)
            writer.member("sentAt", message.sentAt)
            writer.member("to", message.to)
            writer.member("type", ServerFrame.Kind.message.rawValue)
            return writer.finish()
        case .answer(let answer):
            var writer = JSONObjectWriter(into: output)
            writer.member("id", answer.id)
            writer.member("message", answer.message)
            writer.member("messageId", answer.messageId)
            writer.member("reason", answer.reason?.rawValue)
            writer.member("result", answer.result.rawValue)
            writer.member("sessions", answer.sessions)
            writer.member("ttl", answer.ttl)
            writer.member("type", ServerFrame.Kind.answer.rawValue)
            return writer.finish()
        case .pong(let pong):
            var writer = JSONObjectWriter(into: output)
            writer.member("id", pong.id)
            writer.member("serverTime", pong.serverTime)
            writer.member("type", ServerFrame.Kind.pong.rawValue)
            return writer.finish()
        default:
            return nil
        }
    }
}
