import CallAPI
import Foundation

/// What a VoIP push (or an FCM data message) carries so that a woken app can show the call on the system call
/// screen before its signaling connection is back: who calls, with what media, until when.
///
/// On the wire it is one JSON object under the top-level key ``payloadKey``:
///
/// ```json
/// {"callapi": {"v": 1, "callId": "8D0C…", "callerId": 1001, "callerName": "Ada", "video": true,
///              "ringDeadline": 1767225615000}}
/// ```
///
/// FCM data messages carry only strings, so there the value of `callapi` is that object as a JSON string;
/// ``init(payload:)`` reads both forms.
public struct SystemCallPush: Sendable, Equatable, Codable {
    /// The top-level key of the payload.
    public static let payloadKey = "callapi"
    /// The payload version this library writes and reads.
    public static let version = 1
    /// The key of the caller's user extension (``PrepareConfig/userExtension``) that holds the name to show.
    public static let callerNameExtensionKey = CallMessageExtensionKey.callerName.description
    /// The longest `callId` accepted (CallAPI's are UUIDs, 36 characters).
    public static let maxCallIdLength = 128
    /// Caller names are cut to this many characters.
    public static let maxCallerNameLength = 128

    /// The call's id, as in its signaling messages.
    public var callId: String
    /// The caller's user id.
    public var callerId: UInt
    /// The caller's display name, from its call extension, if it gave one.
    public var callerName: String?
    /// A video call (else audio only).
    public var video: Bool
    /// Wall time (milliseconds since 1970) after which the call no longer rings.
    public var ringDeadlineMillis: Int64

    /// - Parameter callerName: cut to ``maxCallerNameLength`` characters; empty means none.
    public init(callId: String, callerId: UInt, callerName: String?, video: Bool, ringDeadlineMillis: Int64) {
        self.callId = callId
        self.callerId = callerId
        self.callerName = callerName.flatMap { $0.isEmpty ? nil : String($0.prefix(Self.maxCallerNameLength)) }
        self.video = video
        self.ringDeadlineMillis = ringDeadlineMillis
    }

    /// The payload of a call placed with `callExtension` (the caller's user extension merged with the call's),
    /// taking the caller's name from its ``callerNameExtensionKey`` entry.
    public init(
        callId: String, callerId: UInt, callExtension: [String: JSONValue]?, video: Bool, ringDeadlineMillis: Int64
    ) {
        self.init(
            callId: callId, callerId: callerId, callerName: callExtension?[Self.callerNameExtensionKey]?.stringValue,
            video: video, ringDeadlineMillis: ringDeadlineMillis)
    }

    /// The system call screen's identifier of this call (see ``CallUUID``).
    public var uuid: UUID { CallUUID.of(callId: callId) }

    // MARK: - Reading

    /// Reads a push's payload, as PushKit (`PKPushPayload.dictionaryRepresentation`) or FCM hands it over.
    ///
    /// - Throws: ``SystemCallPushError`` saying what is missing or wrong.
    public init(payload: [AnyHashable: Any]) throws(SystemCallPushError) {
        guard let raw = payload[Self.payloadKey] else { throw .missingPayload }
        // Through JSON text rather than casts: on Linux a Foundation number 1 also casts to `true`.
        let data: Data?
        if let text = raw as? String {
            data = text.data(using: .utf8)
        } else if raw is [String: Any], JSONSerialization.isValidJSONObject(raw) {
            data = try? JSONSerialization.data(withJSONObject: raw)
        } else {
            throw .malformed("\"\(Self.payloadKey)\" is neither an object nor a JSON string")
        }
        guard let data, let value = try? JSONDecoder().decode(JSONValue.self, from: data),
            let body = value.objectValue
        else { throw .malformed("the \"\(Self.payloadKey)\" entry is not a JSON object") }
        try self.init(body: body)
    }

    /// Reads the object under ``payloadKey``.
    init(body: [String: JSONValue]) throws(SystemCallPushError) {
        guard let version = body[CodingKeys.version.rawValue]?.intValue else { throw .invalidField("v", "missing") }
        guard version == Self.version else { throw .unsupportedVersion(version) }
        guard let callId = body[CodingKeys.callId.rawValue]?.stringValue else {
            throw .invalidField("callId", "missing or not a string")
        }
        guard !callId.isEmpty, callId.count <= Self.maxCallIdLength else {
            throw .invalidField("callId", "must have 1 to \(Self.maxCallIdLength) characters")
        }
        guard let callerId = body[CodingKeys.callerId.rawValue]?.intValue, callerId >= 0 else {
            throw .invalidField("callerId", "missing or not a user id")
        }
        let name = body[CodingKeys.callerName.rawValue]
        guard name == nil || name == .null || name?.stringValue != nil else {
            throw .invalidField("callerName", "not a string")
        }
        guard case .bool(let video) = body[CodingKeys.video.rawValue] else {
            throw .invalidField("video", "missing or not a boolean")
        }
        guard let deadline = body[CodingKeys.ringDeadlineMillis.rawValue]?.intValue, deadline > 0 else {
            throw .invalidField("ringDeadline", "missing or not a time in milliseconds")
        }
        self.init(
            callId: callId, callerId: UInt(callerId), callerName: name?.stringValue, video: video,
            ringDeadlineMillis: Int64(deadline))
    }

    // MARK: - Writing

    /// The whole push body as JSON text, for a server to send: `{"callapi": {…}}`.
    public func payloadJSON() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Encoding a struct of strings, numbers and booleans cannot fail.
        let data = (try? encoder.encode([Self.payloadKey: self])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    enum CodingKeys: String, CodingKey {
        case version = "v"
        case callId
        case callerId
        case callerName
        case video
        case ringDeadlineMillis = "ringDeadline"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.version, forKey: .version)
        try container.encode(callId, forKey: .callId)
        try container.encode(callerId, forKey: .callerId)
        try container.encodeIfPresent(callerName, forKey: .callerName)
        try container.encode(video, forKey: .video)
        try container.encode(ringDeadlineMillis, forKey: .ringDeadlineMillis)
    }

    public init(from decoder: any Decoder) throws {
        do {
            try self.init(body: try JSONValue(from: decoder).objectValue ?? [:])
        } catch let error as SystemCallPushError {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "\(error)"))
        }
    }
}
