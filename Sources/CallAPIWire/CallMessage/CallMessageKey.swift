/// The top-level keys of a call message (wire format 1.0, docs/spec/wire-format.md): the one place each is spelled.
/// Readers and writers of call messages name a key through its case, never as a literal of their own.
///
/// `@usableFromInline`: ``CallMessageObject``'s inlinable subscript takes one.
@usableFromInline
package enum CallMessageKey: Int, CaseIterable, Sendable {
    case messageAction, messageVersion, messageTimestamp, messageId, fromUserId, callId
    case fromUserExtension, reliability, deviceId, remoteUserId, fromRoomId, cancelCallByInternal
    case answeredByDevice, rejectedByDevice, rejectByInternal, rejectReason, hangupReason, ackMessageId, inCall

    /// The key as on the wire.
    package var spelling: StaticString {
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
    package var name: String { Self.names[rawValue] }

    private static let names = all.map { $0.spelling.description }

    /// `allCases` builds its array on every use; this one is built once.
    package static let all = allCases

    /// The key whose spelling, closed by a quote, starts at `start` in `bytes` (a key without escapes, read in
    /// place), if the format knows it. The first byte leaves at most five candidates, each compared a word at a
    /// time where it would end, so the key is neither scanned for its end nor compared byte by byte.
    package init?(keyAt start: Int, in bytes: UnsafeBufferPointer<UInt8>) {
        guard start < bytes.count else { return nil }
        func spelled(_ key: CallMessageKey) -> CallMessageKey? { key.isSpelled(at: start, in: bytes) ? key : nil }
        let found: CallMessageKey?
        switch bytes[start] {
        case UInt8(ascii: "m"):
            found =
                spelled(.messageAction) ?? spelled(.messageVersion) ?? spelled(.messageTimestamp)
                ?? spelled(.messageId)
        case UInt8(ascii: "f"): found = spelled(.fromUserId) ?? spelled(.fromRoomId) ?? spelled(.fromUserExtension)
        case UInt8(ascii: "c"): found = spelled(.callId) ?? spelled(.cancelCallByInternal)
        case UInt8(ascii: "r"):
            found =
                spelled(.reliability) ?? spelled(.remoteUserId) ?? spelled(.rejectByInternal)
                ?? spelled(.rejectReason) ?? spelled(.rejectedByDevice)
        case UInt8(ascii: "a"): found = spelled(.ackMessageId) ?? spelled(.answeredByDevice)
        case UInt8(ascii: "d"): found = spelled(.deviceId)
        case UInt8(ascii: "h"): found = spelled(.hangupReason)
        case UInt8(ascii: "i"): found = spelled(.inCall)
        default: found = nil
        }
        guard let found else { return nil }
        self = found
    }

    /// Whether this key's spelling and a closing quote are the bytes at `start`.
    private func isSpelled(at start: Int, in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let spelling = spelling
        let count = spelling.utf8CodeUnitCount
        guard start + count < bytes.count, bytes[start + count] == UInt8(ascii: "\""),
            let base = bytes.baseAddress
        else { return false }
        return Self.sameBytes(UnsafeRawPointer(spelling.utf8Start), UnsafeRawPointer(base + start), count: count)
    }

    /// Whether `count` bytes (4 to 24: every key is 6 to 20) at `a` and at `b` are the same, compared a word at
    /// a time; the words overlap where `count` is not a multiple of the word.
    private static func sameBytes(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, count: Int) -> Bool {
        if count < 8 {
            return a.loadUnaligned(as: UInt32.self) == b.loadUnaligned(as: UInt32.self)
                && a.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
                    == b.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
        }
        let middle = min(8, count - 8)
        return a.loadUnaligned(as: UInt64.self) == b.loadUnaligned(as: UInt64.self)
            && a.loadUnaligned(fromByteOffset: middle, as: UInt64.self)
                == b.loadUnaligned(fromByteOffset: middle, as: UInt64.self)
            && a.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
                == b.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
    }

    /// The key `name` (a key that had escapes), if the format knows it.
    package init?(name: String) {
        guard let key = Self.all.first(where: { $0.name == name }) else { return nil }
        self = key
    }
}
