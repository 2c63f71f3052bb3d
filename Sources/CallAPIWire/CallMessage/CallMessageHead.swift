/// The few members of a call message that say what it is about, read without reading the rest: its action, its
/// call, the sending device, whether a cancel came from the caller's ring timer, and the caller's name from the user
/// extension. Every message a user sends through the server passes such a peek (push marking), so it picks these
/// members out in one pass (``FlatJSONObject``'s pick mode) and builds nothing for the others.
///
/// It checks only what it reads: `message_version` and the other members are not looked at (``WireError`` says what
/// is wrong with a message it refuses). `deviceId` of another type than a string reads as absent.
package struct CallMessageHead: Sendable, Equatable {
    package var action: MessageAction
    package var callId: String?
    package var deviceId: String?
    /// `cancelCallByInternal`: 1 when a cancel's ring timer ran out.
    package var cancelCallByInternal: Int?
    /// The string under ``CallMessageExtensionKey/callerName`` in `fromUserExtension`, if there is one.
    package var callerName: String?

    package init(
        action: MessageAction, callId: String?, deviceId: String? = nil, cancelCallByInternal: Int? = nil,
        callerName: String? = nil
    ) {
        self.action = action
        self.callId = callId
        self.deviceId = deviceId
        self.cancelCallByInternal = cancelCallByInternal
        self.callerName = callerName
    }

    /// Reads the head of `text`: picked in one pass when the message is a flat object (as clients send them), else
    /// through the whole tree (``init(readingTree:)``), which reads the same members the same way.
    package init(_ text: String) throws(WireError) {
        var text = text
        let picked: Result<CallMessageHead, WireError>? = text.withUTF8 { bytes in
            FlatJSONObject.withPicked(Self.keys, fromUTF8: bytes) { values in
                .some(Self.read(picked: values))
            }
        }
        if let picked {
            self = try picked.get()
        } else {
            self = try Self(readingTree: text)
        }
    }

    /// Reads the head of `text` from its whole tree (``JSONReader/parse(_:)``): the general path, for texts the
    /// one-pass reader is not sure of (arrays, deeper nesting, fractions), and the reference it is tested against.
    package init(readingTree text: String) throws(WireError) {
        let value: JSONValue
        do {
            value = try JSONReader.parse(text)
        } catch {
            throw .notJSON
        }
        guard case .object(let object) = value else { throw .notAnObject }
        func member(_ key: CallMessageKey) -> JSONValue? {
            let value = object[key.name]
            return value == .null ? nil : value
        }
        guard let rawAction = member(.messageAction) else { throw .missingField(CallMessageKey.messageAction.name) }
        action = try Self.action(rawAction.intValue)
        callId = try Self.optional(member(.callId), .callId) { $0.stringValue }
        deviceId = member(.deviceId)?.stringValue
        cancelCallByInternal = try Self.optional(member(.cancelCallByInternal), .cancelCallByInternal) { $0.intValue }
        let extensions = try Self.optional(member(.fromUserExtension), .fromUserExtension) { $0.objectValue }
        callerName = extensions?[CallMessageExtensionKey.callerName.description]?.stringValue
    }

    /// The members picked, in the order of ``read(picked:)``'s slots.
    private static let keys = JSONKeys([
        CallMessageKey.messageAction.spelling, CallMessageKey.callId.spelling, CallMessageKey.deviceId.spelling,
        CallMessageKey.cancelCallByInternal.spelling, CallMessageKey.fromUserExtension.spelling,
    ])

    private static func read(picked values: UnsafeMutableBufferPointer<FlatJSONObject.Value?>) -> Result<
        CallMessageHead, WireError
    > {
        Result { () throws(WireError) in
            let action: MessageAction
            switch values[0] {
            case nil, .null?: throw .missingField(CallMessageKey.messageAction.name)
            case .int(let wide)?: action = try Self.action(Int(exactly: wide))
            default: throw .invalidField(CallMessageKey.messageAction.name)
            }
            guard let callId = values[1].optionalString else { throw .invalidField(CallMessageKey.callId.name) }
            var deviceId: String?
            if case .string(let text)? = values[2] { deviceId = text }
            guard let cancelByTimer = values[3].optionalInt else {
                throw .invalidField(CallMessageKey.cancelCallByInternal.name)
            }
            guard let extensions = values[4].optionalObject else {
                throw .invalidField(CallMessageKey.fromUserExtension.name)
            }
            var callerName: String?
            if case .string(let name)? = extensions?[CallMessageExtensionKey.callerName.description] {
                callerName = name
            }
            return CallMessageHead(
                action: action, callId: callId, deviceId: deviceId, cancelCallByInternal: cancelByTimer,
                callerName: callerName)
        }
    }

    /// The action numbered `raw`; an error when it is not an integer or no action has that number.
    private static func action(_ raw: Int?) throws(WireError) -> MessageAction {
        guard let raw else { throw .invalidField(CallMessageKey.messageAction.name) }
        guard let action = MessageAction(rawValue: raw) else { throw .unknownAction(raw) }
        return action
    }

    /// A member that may be absent: nil then, else `read` of it, which must not be nil.
    private static func optional<T>(
        _ value: JSONValue?, _ key: CallMessageKey, _ read: (JSONValue) -> T?
    ) throws(WireError) -> T? {
        guard let value else { return nil }
        guard let typed = read(value) else { throw .invalidField(key.name) }
        return typed
    }
}
