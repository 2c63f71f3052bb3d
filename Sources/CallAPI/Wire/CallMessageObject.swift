/// A received call message's top-level JSON object, read in one pass by ``JSONParser/parseCallObject(_:)``:
/// each key the wire format knows has a slot of its own, found by comparing the key's bytes, so reading a
/// message hashes nothing; any other key goes to ``others``. ``fields`` makes the dictionary the generic parser
/// makes of the same text (a repeated key: the last one counts), only for the messages whose event info needs
/// it.
struct CallMessageObject: Sendable {
    /// The keys of wire format 1.0.
    enum Key: Int, CaseIterable, Sendable {
        case messageAction, messageVersion, messageTimestamp, messageId, fromUserId, callId
        case fromUserExtension, reliability, deviceId, remoteUserId, fromRoomId, cancelCallByInternal
        case answeredByDevice, rejectedByDevice, rejectByInternal, rejectReason, hangupReason, ackMessageId, inCall

        /// The key as on the wire.
        var spelling: StaticString {
            switch self {
            case .messageAction: "message_action"
            case .messageVersion: "message_version"
            case .messageTimestamp: "message_timestamp"
            case .messageId: "messageId"
            case .fromUserId: "fromUserId"
            case .callId: "callId"
            case .fromUserExtension: "fromUserExtension"
            case .reliability: "reliability"
            case .deviceId: "deviceId"
            case .remoteUserId: "remoteUserId"
            case .fromRoomId: "fromRoomId"
            case .cancelCallByInternal: "cancelCallByInternal"
            case .answeredByDevice: "answeredByDevice"
            case .rejectedByDevice: "rejectedByDevice"
            case .rejectByInternal: "rejectByInternal"
            case .rejectReason: "rejectReason"
            case .hangupReason: "hangupReason"
            case .ackMessageId: "ackMessageId"
            case .inCall: "inCall"
            }
        }

        /// The key as on the wire, as a `String`: made once per key, so that using one as a dictionary key
        /// allocates nothing.
        var name: String { Self.names[rawValue] }

        private static let names = all.map { $0.spelling.description }

        /// `allCases` builds its array on every use; this one is built once.
        static let all = allCases

        /// The key spelled by `bytes` (a key without escapes, read in place), if the format knows it.
        init?(bytes: Slice<UnsafeBufferPointer<UInt8>>) {
            // A key's length and first byte leave at most two candidates; their bytes are compared after.
            let candidates: (Key, Key?)
            switch (bytes.count, bytes.first ?? 0) {
            case (6, UInt8(ascii: "c")): candidates = (.callId, nil)
            case (6, UInt8(ascii: "i")): candidates = (.inCall, nil)
            case (8, UInt8(ascii: "d")): candidates = (.deviceId, nil)
            case (9, UInt8(ascii: "m")): candidates = (.messageId, nil)
            case (10, UInt8(ascii: "f")): candidates = (.fromUserId, .fromRoomId)
            case (11, UInt8(ascii: "r")): candidates = (.reliability, nil)
            case (12, UInt8(ascii: "a")): candidates = (.ackMessageId, nil)
            case (12, UInt8(ascii: "h")): candidates = (.hangupReason, nil)
            case (12, UInt8(ascii: "r")): candidates = (.remoteUserId, .rejectReason)
            case (14, UInt8(ascii: "m")): candidates = (.messageAction, nil)
            case (15, UInt8(ascii: "m")): candidates = (.messageVersion, nil)
            case (16, UInt8(ascii: "a")): candidates = (.answeredByDevice, nil)
            case (16, UInt8(ascii: "r")): candidates = (.rejectedByDevice, .rejectByInternal)
            case (17, UInt8(ascii: "f")): candidates = (.fromUserExtension, nil)
            case (17, UInt8(ascii: "m")): candidates = (.messageTimestamp, nil)
            case (20, UInt8(ascii: "c")): candidates = (.cancelCallByInternal, nil)
            default: return nil
            }
            if candidates.0.spells(bytes) {
                self = candidates.0
            } else if let other = candidates.1, other.spells(bytes) {
                self = other
            } else {
                return nil
            }
        }

        private func spells(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
            let spelling = spelling
            guard spelling.utf8CodeUnitCount == bytes.count else { return false }
            let start = spelling.utf8Start
            var offset = 0
            while offset < bytes.count {
                if start[offset] != bytes[bytes.startIndex + offset] { return false }
                offset += 1
            }
            return true
        }

        /// The key `name` (a key that had escapes), if the format knows it.
        init?(name: String) {
            guard let key = Self.all.first(where: { $0.name == name }) else { return nil }
            self = key
        }
    }

    private var messageAction: JSONValue?
    private var messageVersion: JSONValue?
    private var messageTimestamp: JSONValue?
    private var messageId: JSONValue?
    private var fromUserId: JSONValue?
    private var callId: JSONValue?
    private var fromUserExtension: JSONValue?
    private var reliability: JSONValue?
    private var deviceId: JSONValue?
    private var remoteUserId: JSONValue?
    private var fromRoomId: JSONValue?
    private var cancelCallByInternal: JSONValue?
    private var answeredByDevice: JSONValue?
    private var rejectedByDevice: JSONValue?
    private var rejectByInternal: JSONValue?
    private var rejectReason: JSONValue?
    private var hangupReason: JSONValue?
    private var ackMessageId: JSONValue?
    private var inCall: JSONValue?
    /// Members under keys the format does not know, kept for the event info.
    private(set) var others: [String: JSONValue] = [:]

    init() {}

    /// The value under `key`, if the object has it.
    subscript(key: Key) -> JSONValue? {
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
    mutating func setOther(_ key: String, _ value: JSONValue) { others[key] = value }

    /// The object as a dictionary, keys as on the wire.
    var fields: [String: JSONValue] {
        // Sized as the generic parser sizes an object: room for every field a call message has.
        var object = others
        object.reserveCapacity(16)
        for key in Key.all {
            if let value = self[key] { object[key.name] = value }
        }
        return object
    }
}
