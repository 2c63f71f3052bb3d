import CallAPISignalProtocol
import CallAPIWire

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The few fields of a wire-format-1.0 call message the ledger needs (docs/spec/wire-format.md). Anything else in
/// the message, known or not, is ignored.
package struct CallMessageFields: Sendable, Equatable {
    package enum Action: Sendable, Equatable {
        case call(CallMedia, roomId: String?)
        case cancel(byTimer: Bool)
        case accept
        case reject(busy: Bool)
        case hangup(reason: String?)
        /// Acknowledgements and keep-alives: a sign of life from the sender, nothing more.
        case alive
        /// The caller's settled notice to the callee's devices: a cancel naming the device that accepted or
        /// rejected (docs/multi-device.md). The call goes on (or already ended with that accept's or reject's
        /// outcome): a sign of life from the caller, not the call's cancel.
        case settledNotice
    }

    package var callId: String
    package var action: Action
    /// A multi-device client's device id.
    var deviceId: String?

    /// Reads `body`; `nil` when it is not a version-1.0 call message with a `callId` and an action the ledger
    /// knows (other traffic between users is not the ledger's business).
    ///
    /// Every relayed message passes here on the event loop, so the flat objects the clients send are read in one
    /// pass without Foundation; only other shapes (nested values, fractions, duplicate keys…) take `JSONDecoder`.
    /// ``parse(_:)-(String)`` of a body as it travels: one that cannot be an object is not unescaped to find out.
    package static func parse(_ body: MessageBody) -> CallMessageFields? {
        body.mayBeObject ? parse(body.text) : nil
    }

    static func parse(_ body: String) -> CallMessageFields? {
        guard body.utf8.first == UInt8(ascii: "{") else { return nil }
        // The picked values are read where they are, on the stack: copying them into an array and releasing it
        // cost about 6,700 instructions per call in the calls bench (callgrind; docs/benchmarks.md).
        var text = body
        let picked: CallMessageFields?? = text.withUTF8 { bytes in
            FlatJSONObject.withPicked(Raw.keys, fromUTF8: bytes) { values in
                .some(values[Raw.callIdSlot] == nil ? nil : fields(Raw(values)))
            }
        }
        if let picked { return picked }
        return parseDecoding(body)
    }

    /// ``parse(_:)`` through `JSONDecoder` alone: the general path, and the reference the fast path is tested
    /// against.
    static func parseDecoding(_ body: String) -> CallMessageFields? {
        // A cheap look first: most traffic between users is not a call message and is never decoded.
        guard body.utf8.first == UInt8(ascii: "{"), mentionsCallId(body),
            let raw = try? JSONDecoder().decode(Raw.self, from: Data(body.utf8))
        else { return nil }
        return fields(raw)
    }

    /// `text`'s first `characters` characters. A text of no more UTF-8 bytes than that is whole, which is asked
    /// first: counting characters walks grapheme boundaries (1,000 instructions for a device id).
    private static func capped(_ text: String, characters: Int) -> String {
        text.utf8.count <= characters ? text : String(text.prefix(characters))
    }

    private static func fields(_ raw: Raw) -> CallMessageFields? {
        guard raw.version == "1.0", let callId = raw.callId, !callId.isEmpty, callId.utf8.count <= 128,
            let code = raw.action, let messageAction = MessageAction(rawValue: code)
        else { return nil }
        // Exhaustive: an action added to the wire format does not compile here until the ledger decides what it is.
        let action: Action
        switch messageAction {
        case .videoCall: action = .call(.video, roomId: raw.fromRoomId)
        case .audioCall: action = .call(.audio, roomId: raw.fromRoomId)
        case .cancelCall where raw.answeredByDevice != nil || raw.rejectedByDevice != nil: action = .settledNotice
        case .cancelCall: action = .cancel(byTimer: raw.cancelCallByInternal == 1)
        case .accept: action = .accept
        case .reject: action = .reject(busy: raw.rejectByInternal == 1)
        case .hangup: action = .hangup(reason: raw.hangupReason.map { capped($0, characters: 200) })
        case .ack, .keepAlive: action = .alive
        }
        return CallMessageFields(
            callId: callId, action: action, deviceId: raw.deviceId.map { capped($0, characters: 128) })
    }

    /// Whether the text holds `"callId"` anywhere, compared byte by byte.
    private static func mentionsCallId(_ body: String) -> Bool {
        let needle: StaticString = "\"callId\""
        let bytes = body.utf8
        let count = needle.utf8CodeUnitCount
        guard bytes.count >= count else { return false }
        return needle.withUTF8Buffer { key in
            var start = bytes.startIndex
            while let quote = bytes[start...].firstIndex(of: key[0]) {
                if bytes[quote...].starts(with: key) { return true }
                start = bytes.index(after: quote)
            }
            return false
        }
    }

    /// Tolerant shapes: every field optional, numbers that arrive as strings accepted where the clients differ.
    private struct Raw: Decodable {
        var action: Int?
        var version: String?
        var callId: String?
        var fromRoomId: String?
        var cancelCallByInternal: Int?
        var rejectByInternal: Int?
        var hangupReason: String?
        var deviceId: String?
        var answeredByDevice: String?
        var rejectedByDevice: String?

        /// The keys read, in the order of ``init(_:)``'s values.
        static let keys = JSONKeys(Key.allCases.map(\.wire.spelling))
        static let callIdSlot = 2

        /// The same reading as the decoder's below, from the values of ``keys`` in a flat object.
        init(_ values: UnsafeMutableBufferPointer<FlatJSONObject.Value?>) {
            func int(_ slot: Int) -> Int? {
                switch values[slot] {
                case .int(let value): Int(exactly: value)
                case .string(let text): Int(text)
                default: nil
                }
            }
            func string(_ slot: Int) -> String? {
                if case .string(let value) = values[slot] { value } else { nil }
            }
            action = int(0)
            version = string(1)
            callId = string(Self.callIdSlot)
            fromRoomId = string(3)
            cancelCallByInternal = int(4)
            rejectByInternal = int(5)
            hangupReason = string(6)
            deviceId = string(7)
            answeredByDevice = string(8)
            rejectedByDevice = string(9)
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: Key.self)
            action = Self.int(c, .action)
            version = try? c.decodeIfPresent(String.self, forKey: .version)
            callId = try? c.decodeIfPresent(String.self, forKey: .callId)
            fromRoomId = try? c.decodeIfPresent(String.self, forKey: .fromRoomId)
            cancelCallByInternal = Self.int(c, .cancelCallByInternal)
            rejectByInternal = Self.int(c, .rejectByInternal)
            hangupReason = try? c.decodeIfPresent(String.self, forKey: .hangupReason)
            deviceId = try? c.decodeIfPresent(String.self, forKey: .deviceId)
            answeredByDevice = try? c.decodeIfPresent(String.self, forKey: .answeredByDevice)
            rejectedByDevice = try? c.decodeIfPresent(String.self, forKey: .rejectedByDevice)
        }

        /// The members read, in the order of ``keys`` (``init(_:)``'s slots), each spelled by ``CallMessageKey``.
        private enum Key: CodingKey, CaseIterable {
            case action, version, callId, fromRoomId, cancelCallByInternal, rejectByInternal
            case hangupReason, deviceId, answeredByDevice, rejectedByDevice

            var wire: CallMessageKey {
                switch self {
                case .action: .messageAction
                case .version: .messageVersion
                case .callId: .callId
                case .fromRoomId: .fromRoomId
                case .cancelCallByInternal: .cancelCallByInternal
                case .rejectByInternal: .rejectByInternal
                case .hangupReason: .hangupReason
                case .deviceId: .deviceId
                case .answeredByDevice: .answeredByDevice
                case .rejectedByDevice: .rejectedByDevice
                }
            }

            var stringValue: String { wire.name }
            var intValue: Int? { nil }

            init?(stringValue: String) {
                guard let key = Self.allCases.first(where: { $0.wire.name == stringValue }) else { return nil }
                self = key
            }

            init?(intValue: Int) { nil }
        }

        private static func int(_ c: KeyedDecodingContainer<Key>, _ key: Key) -> Int? {
            if let value = try? c.decodeIfPresent(Int.self, forKey: key) { return value }
            if let text = try? c.decodeIfPresent(String.self, forKey: key) { return Int(text) }
            return nil
        }
    }
}
