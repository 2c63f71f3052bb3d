/// One call message of wire format 1.0, as `docs/spec/wire-format.md` describes it.
///
/// Keys the format knows are typed fields; the whole object is kept in ``fields`` so that unknown keys
/// survive into event info and nothing the peer sent is lost.
package struct CallMessage: Sendable, Equatable {
    package static let version = "1.0"

    // The stored properties are declared in this order so that the one-byte fields fill the padding after
    // the optional integers: messages are copied into actions and inputs, and their size is most of that cost.

    /// The sender's message counter; `nil` when the sender sent none (the Web client never does).
    package var messageId: Int?
    package var action: MessageAction
    package var timestamp: Int64
    package var fromUserId: UInt
    package var callId: String
    package var fromUserExtension: [String: JSONValue]?
    /// Call messages: the callee.
    package var remoteUserId: UInt?
    /// Cancel: the caller's ring timer ran out.
    package var cancelCallByInternal: Bool
    /// Reject: the callee's client rejected by itself (busy).
    package var rejectByInternal: Bool
    /// Ours: the sender acknowledges messages and sends keep-alives (key `reliability`, value 1).
    package var reliable: Bool
    /// Ack: whether the acknowledging endpoint is in a call with the receiver of the ack.
    package var inCall: Bool?
    /// Call messages: the RTC channel both sides join.
    package var fromRoomId: String?
    /// Ack: the `messageId` acknowledged.
    package var ackMessageId: Int?
    /// Ours: the sending device, one of possibly several logged in as `fromUserId` (key `deviceId`).
    /// Absent from the existing clients' messages.
    package var deviceId: String?
    /// The fields most messages lack, kept by reference (nil when all are absent).
    private var rareBox: RareFieldsBox?

    package var rejectReason: String? {
        get { rareBox?.fields.rejectReason }
        set { rare.rejectReason = newValue }
    }
    package var hangupReason: String? {
        get { rareBox?.fields.hangupReason }
        set { rare.hangupReason = newValue }
    }
    /// Ours, cancel: the call was accepted on this device of the callee user; its other devices stop ringing
    /// (key `answeredByDevice`).
    package var answeredByDevice: String? {
        get { rareBox?.fields.answeredByDevice }
        set { rare.answeredByDevice = newValue }
    }
    /// Ours, cancel: the call was rejected on this device of the callee user, which rejects it for all of
    /// them (key `rejectedByDevice`).
    package var rejectedByDevice: String? {
        get { rareBox?.fields.rejectedByDevice }
        set { rare.rejectedByDevice = newValue }
    }

    private var rare: RareFields {
        get { rareBox?.fields ?? RareFields() }
        // No box for no fields, so that equal messages have equal boxes (nil, or boxes of equal fields).
        set { rareBox = newValue == RareFields() ? nil : RareFieldsBox(newValue) }
    }

    /// The longest device id read or written.
    package static let maxDeviceIdLength = 64

    package init(
        action: MessageAction, timestamp: Int64, messageId: Int?, fromUserId: UInt, callId: String,
        fromUserExtension: [String: JSONValue]? = nil, remoteUserId: UInt? = nil, fromRoomId: String? = nil,
        cancelCallByInternal: Bool = false, rejectByInternal: Bool = false, rejectReason: String? = nil,
        hangupReason: String? = nil, reliable: Bool = false, ackMessageId: Int? = nil, inCall: Bool? = nil
    ) {
        self.action = action
        self.timestamp = timestamp
        self.messageId = messageId
        self.fromUserId = fromUserId
        self.callId = callId
        self.fromUserExtension = fromUserExtension
        self.remoteUserId = remoteUserId
        self.fromRoomId = fromRoomId
        self.cancelCallByInternal = cancelCallByInternal
        self.rejectByInternal = rejectByInternal
        self.reliable = reliable
        self.ackMessageId = ackMessageId
        self.inCall = inCall
        // The rare fields go in one box, made only when one of them is given.
        if rejectReason != nil || hangupReason != nil {
            rareBox = RareFieldsBox(RareFields(rejectReason: rejectReason, hangupReason: hangupReason))
        }
    }

    /// The message as a JSON object, keys as on the wire.
    package var fields: [String: JSONValue] {
        // Sized for every field a message can have, so adding the optional ones never grows the table.
        var object = [String: JSONValue](minimumCapacity: 14)
        object[CallMessageKey.messageAction.name] = .int(action.rawValue)
        object[CallMessageKey.messageVersion.name] = .string(Self.version)
        object[CallMessageKey.messageTimestamp.name] = .int(Int(timestamp))
        if let messageId { object[CallMessageKey.messageId.name] = .int(messageId) }
        object[CallMessageKey.fromUserId.name] = .int(Int(fromUserId))
        object[CallMessageKey.callId.name] = .string(callId)
        if let fromUserExtension { object[CallMessageKey.fromUserExtension.name] = .object(fromUserExtension) }
        if reliable { object[CallMessageKey.reliability.name] = .int(1) }
        if let deviceId { object[CallMessageKey.deviceId.name] = .string(deviceId) }
        switch action {
        case .videoCall, .audioCall:
            if let remoteUserId { object[CallMessageKey.remoteUserId.name] = .int(Int(remoteUserId)) }
            if let fromRoomId { object[CallMessageKey.fromRoomId.name] = .string(fromRoomId) }
        case .cancelCall:
            object[CallMessageKey.cancelCallByInternal.name] = .int(cancelCallByInternal ? 1 : 0)
            if let answeredByDevice { object[CallMessageKey.answeredByDevice.name] = .string(answeredByDevice) }
            if let rejectedByDevice { object[CallMessageKey.rejectedByDevice.name] = .string(rejectedByDevice) }
        case .reject:
            object[CallMessageKey.rejectByInternal.name] = .int(rejectByInternal ? 1 : 0)
            if let rejectReason { object[CallMessageKey.rejectReason.name] = .string(rejectReason) }
        case .hangup:
            if let hangupReason { object[CallMessageKey.hangupReason.name] = .string(hangupReason) }
        case .ack:
            if let ackMessageId { object[CallMessageKey.ackMessageId.name] = .int(ackMessageId) }
            if let inCall { object[CallMessageKey.inCall.name] = .int(inCall ? 1 : 0) }
        case .accept, .keepAlive:
            break
        }
        return object
    }

    /// The UTF-8 JSON text to put on the signaling channel.
    package func encoded() -> String {
        String(jsonText: self)
    }

    /// Parses a message received from the signaling channel.
    /// - Throws: ``WireError`` saying what is wrong with it.
    package static func decode(_ text: String) throws(WireError) -> (message: CallMessage, fields: [String: JSONValue])
    {
        let (message, object) = try decodeObject(text)
        return (message, object.fields)
    }

    /// Parses a received message, keeping its object's members in slots rather than a dictionary: the
    /// machine makes the dictionary (``CallMessageObject/fields``) only for the event info that needs it.
    static func decodeObject(_ text: String) throws(WireError) -> (message: CallMessage, object: CallMessageObject) {
        var object = CallMessageObject()
        let message = try decode(text, into: &object)
        return (message, object)
    }

    /// ``decodeObject(_:)`` reading into `object` (a new one) in place: the machine's way, which copies neither.
    static func decode(_ text: String, into object: inout CallMessageObject) throws(WireError) -> CallMessage {
        let isObject: Bool
        do {
            isObject = try JSONReader.parseCallObject(text, into: &object)
        } catch {
            throw .notJSON
        }
        guard isObject else { throw .notAnObject }
        guard let version = object[.messageVersion]?.stringValue else {
            throw .missingField(CallMessageKey.messageVersion.name)
        }
        guard version == Self.version else { throw .unsupportedVersion(version) }
        guard let rawAction = object[.messageAction]?.intValue else {
            throw .missingField(CallMessageKey.messageAction.name)
        }
        guard let action = MessageAction(rawValue: rawAction) else { throw .unknownAction(rawAction) }
        let callId = try field(.callId, in: object) { $0.stringValue.flatMap { $0.isEmpty ? nil : $0 } }
        let fromUserId = try field(.fromUserId, in: object, UserID.wire)
        let messageId = try optionalField(.messageId, in: object) { $0.intValue }
        let timestamp = try field(.messageTimestamp, in: object) { $0.intValue.map(Int64.init) }
        var message = CallMessage(
            action: action, timestamp: timestamp, messageId: messageId, fromUserId: fromUserId, callId: callId)
        message.fromUserExtension = try optionalField(.fromUserExtension, in: object) { $0.objectValue }
        message.reliable = try optionalField(.reliability, in: object) { $0.intValue }.map { $0 >= 1 } ?? false
        message.deviceId = try optionalField(.deviceId, in: object, deviceId)
        switch action {
        case .videoCall, .audioCall:
            message.remoteUserId = try field(.remoteUserId, in: object, UserID.wire)
            message.fromRoomId = try field(.fromRoomId, in: object) {
                $0.stringValue.flatMap { $0.isEmpty ? nil : $0 }
            }
        case .cancelCall:
            message.cancelCallByInternal = try optionalField(.cancelCallByInternal, in: object) { $0.intValue } == 1
            message.answeredByDevice = try optionalField(.answeredByDevice, in: object, deviceId)
            message.rejectedByDevice = try optionalField(.rejectedByDevice, in: object, deviceId)
        case .reject:
            message.rejectByInternal = try optionalField(.rejectByInternal, in: object) { $0.intValue } == 1
            message.rejectReason = try optionalField(.rejectReason, in: object) { $0.stringValue }
        case .hangup:
            message.hangupReason = try optionalField(.hangupReason, in: object) { $0.stringValue }
        case .ack:
            message.ackMessageId = try field(.ackMessageId, in: object) { $0.intValue }
            message.inCall = try optionalField(.inCall, in: object) { $0.intValue }.map { $0 == 1 }
        case .accept, .keepAlive:
            break
        }
        return message
    }

    /// A device id: a non-empty string of at most ``maxDeviceIdLength`` UTF-8 bytes.
    private static func deviceId(_ value: JSONValue) -> String? {
        value.stringValue.flatMap { $0.isEmpty || $0.utf8.count > maxDeviceIdLength ? nil : $0 }
    }

    private static func field<T>(
        _ key: CallMessageKey, in object: CallMessageObject, _ read: (JSONValue) -> T?
    ) throws(WireError) -> T {
        guard let value = object[key] else { throw .missingField(key.name) }
        guard let typed = read(value) else { throw .invalidField(key.name) }
        return typed
    }

    private static func optionalField<T>(
        _ key: CallMessageKey, in object: CallMessageObject, _ read: (JSONValue) -> T?
    ) throws(WireError) -> T? {
        // A pattern, not `!= .null`: `JSONValue`'s `==` is not inlinable, and a call per field cost more.
        guard let value = object[key] else { return nil }
        if case .null = value { return nil }
        guard let typed = read(value) else { throw .invalidField(key.name) }
        return typed
    }
}

/// The reasons and device names only some cancels, rejects and hangups carry.
private struct RareFields: Sendable, Equatable {
    var rejectReason: String?
    var hangupReason: String?
    var answeredByDevice: String?
    var rejectedByDevice: String?
}

/// ``RareFields`` behind a reference; immutable, so a change is a new box.
private final class RareFieldsBox: Sendable, Equatable {
    let fields: RareFields

    init(_ fields: RareFields) { self.fields = fields }

    static func == (lhs: RareFieldsBox, rhs: RareFieldsBox) -> Bool { lhs.fields == rhs.fields }
}
