import CallAPISignalProtocol

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The few fields of a wire-format-1.0 call message the ledger needs (docs/spec/wire-format.md). Anything else in
/// the message, known or not, is ignored.
struct CallMessageFields: Sendable, Equatable {
    enum Action: Sendable, Equatable {
        case call(CallMedia, roomId: String?)
        case cancel(byTimer: Bool)
        case accept
        case reject(busy: Bool)
        case hangup(reason: String?)
        /// Acknowledgements and keep-alives: a sign of life from the sender, nothing more.
        case alive
    }

    var callId: String
    var action: Action
    /// A multi-device client's device id.
    var deviceId: String?

    /// Reads `body`; `nil` when it is not a version-1.0 call message with a `callId` and an action the ledger
    /// knows (other traffic between users is not the ledger's business).
    static func parse(_ body: String) -> CallMessageFields? {
        // A cheap look first: most traffic between users is not a call message and is never parsed.
        guard body.first == "{", body.contains("\"callId\""),
            let raw = try? JSONDecoder().decode(Raw.self, from: Data(body.utf8)),
            raw.message_version == "1.0", let callId = raw.callId, !callId.isEmpty, callId.utf8.count <= 128,
            let code = raw.message_action
        else { return nil }
        let action: Action
        switch code {
        case 0: action = .call(.video, roomId: raw.fromRoomId)
        case 10: action = .call(.audio, roomId: raw.fromRoomId)
        // A caller's cancel naming the device that answered only stops the callee's other devices
        // (docs/multi-device.md): the call goes on.
        case 1 where raw.answeredByDevice != nil: action = .alive
        case 1: action = .cancel(byTimer: raw.cancelCallByInternal == 1)
        case 2: action = .accept
        case 3: action = .reject(busy: raw.rejectByInternal == 1)
        case 4: action = .hangup(reason: raw.hangupReason.map { String($0.prefix(200)) })
        case 20, 21: action = .alive
        default: return nil
        }
        return CallMessageFields(callId: callId, action: action, deviceId: raw.deviceId.map { String($0.prefix(128)) })
    }

    /// Tolerant shapes: every field optional, numbers that arrive as strings accepted where the clients differ.
    private struct Raw: Decodable {
        var message_action: Int?
        var message_version: String?
        var callId: String?
        var fromRoomId: String?
        var cancelCallByInternal: Int?
        var rejectByInternal: Int?
        var hangupReason: String?
        var deviceId: String?
        var answeredByDevice: String?

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: Key.self)
            message_action = Self.int(c, .message_action)
            message_version = try? c.decodeIfPresent(String.self, forKey: .message_version)
            callId = try? c.decodeIfPresent(String.self, forKey: .callId)
            fromRoomId = try? c.decodeIfPresent(String.self, forKey: .fromRoomId)
            cancelCallByInternal = Self.int(c, .cancelCallByInternal)
            rejectByInternal = Self.int(c, .rejectByInternal)
            hangupReason = try? c.decodeIfPresent(String.self, forKey: .hangupReason)
            deviceId = try? c.decodeIfPresent(String.self, forKey: .deviceId)
            answeredByDevice = try? c.decodeIfPresent(String.self, forKey: .answeredByDevice)
        }

        private enum Key: String, CodingKey {
            case message_action, message_version, callId, fromRoomId, cancelCallByInternal, rejectByInternal
            case hangupReason, deviceId, answeredByDevice
        }

        private static func int(_ c: KeyedDecodingContainer<Key>, _ key: Key) -> Int? {
            if let value = try? c.decodeIfPresent(Int.self, forKey: key) { return value }
            if let text = try? c.decodeIfPresent(String.self, forKey: key) { return Int(text) }
            return nil
        }
    }
}
