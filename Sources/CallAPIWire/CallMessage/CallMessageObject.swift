/// A received call message's top-level JSON object, read in one pass by ``JSONReader/parseCallObject(_:into:)``:
/// each key the wire format knows has a slot of its own, found by comparing the key's bytes, so reading a
/// message hashes nothing; any other key goes to ``others``. ``fields`` makes the dictionary the generic parser
/// makes of the same text (a repeated key: the last one counts), only for the messages whose event info needs
/// it.
///
/// `@usableFromInline`, with its slots and ``subscript(_:)`` inlinable: CallAPI reads each member through the
/// subscript, and a call into this module copied the whole object for each of the ten or so reads of a message
/// (`scripts/callgrind_machine.sh`). Swift 6.3 inlines the `@inlinable` members of a `package` type into other
/// modules only when the type is `@usableFromInline` too.
@usableFromInline
package struct CallMessageObject: Sendable {
    /// The keys of wire format 1.0 (the name the object's readers have long used).
    @usableFromInline package typealias Key = CallMessageKey

    @usableFromInline var messageAction: JSONValue?
    @usableFromInline var messageVersion: JSONValue?
    @usableFromInline var messageTimestamp: JSONValue?
    @usableFromInline var messageId: JSONValue?
    @usableFromInline var fromUserId: JSONValue?
    @usableFromInline var callId: JSONValue?
    @usableFromInline var fromUserExtension: JSONValue?
    @usableFromInline var reliability: JSONValue?
    @usableFromInline var deviceId: JSONValue?
    @usableFromInline var remoteUserId: JSONValue?
    @usableFromInline var fromRoomId: JSONValue?
    @usableFromInline var cancelCallByInternal: JSONValue?
    @usableFromInline var answeredByDevice: JSONValue?
    @usableFromInline var rejectedByDevice: JSONValue?
    @usableFromInline var rejectByInternal: JSONValue?
    @usableFromInline var rejectReason: JSONValue?
    @usableFromInline var hangupReason: JSONValue?
    @usableFromInline var ackMessageId: JSONValue?
    @usableFromInline var inCall: JSONValue?
    /// Members under keys the format does not know, kept for the event info.
    package private(set) var others: [String: JSONValue] = [:]

    @inlinable package init() {}

    /// The value under `key`, if the object has it.
    @inlinable package subscript(key: Key) -> JSONValue? {
        get {
            switch key {
            case .messageAction: messageAction
            case .messageVersion: messageVersion
            case .messageTimestamp: messageTimestamp
            case .messageId: messageId
            case .fromUserId: fromUserId
            case .callId: callId
            case .fromUserExtension: fromUserExtension
            case .reliability: reliability
            case .deviceId: deviceId
            case .remoteUserId: remoteUserId
            case .fromRoomId: fromRoomId
            case .cancelCallByInternal: cancelCallByInternal
            case .answeredByDevice: answeredByDevice
            case .rejectedByDevice: rejectedByDevice
            case .rejectByInternal: rejectByInternal
            case .rejectReason: rejectReason
            case .hangupReason: hangupReason
            case .ackMessageId: ackMessageId
            case .inCall: inCall
            }
        }
        set {
            switch key {
            case .messageAction: messageAction = newValue
            case .messageVersion: messageVersion = newValue
            case .messageTimestamp: messageTimestamp = newValue
            case .messageId: messageId = newValue
            case .fromUserId: fromUserId = newValue
            case .callId: callId = newValue
            case .fromUserExtension: fromUserExtension = newValue
            case .reliability: reliability = newValue
            case .deviceId: deviceId = newValue
            case .remoteUserId: remoteUserId = newValue
            case .fromRoomId: fromRoomId = newValue
            case .cancelCallByInternal: cancelCallByInternal = newValue
            case .answeredByDevice: answeredByDevice = newValue
            case .rejectedByDevice: rejectedByDevice = newValue
            case .rejectByInternal: rejectByInternal = newValue
            case .rejectReason: rejectReason = newValue
            case .hangupReason: hangupReason = newValue
            case .ackMessageId: ackMessageId = newValue
            case .inCall: inCall = newValue
            }
        }
    }

    /// Stores a member under a key the format does not know.
    package mutating func setOther(_ key: String, _ value: JSONValue) { others[key] = value }

    /// The object as a dictionary, keys as on the wire.
    package var fields: [String: JSONValue] {
        // Sized as the generic parser sizes an object: room for every field a call message has.
        var object = others
        object.reserveCapacity(16)
        for key in Key.all {
            if let value = self[key] { object[key.name] = value }
        }
        return object
    }
}
