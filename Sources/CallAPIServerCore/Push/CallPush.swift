import CallAPISignalProtocol

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a call push carries: the fields of the `callapi` payload that `CallAPISystemCall`'s `SystemCallPush`
/// reads (see docs/push.md).
public struct CallPush: Sendable, Equatable {
    public var callId: String
    /// The caller's user id, as the server authenticated it.
    public var callerId: UInt64
    public var callerName: String?
    public var video: Bool
    /// When the call stops ringing, milliseconds since 1970: the held message's expiry.
    public var ringDeadline: Int64

    public init(callId: String, callerId: UInt64, callerName: String?, video: Bool, ringDeadline: Int64) {
        self.callId = callId
        self.callerId = callerId
        self.callerName = callerName
        self.video = video
        self.ringDeadline = ringDeadline
    }

    /// The payload version (`v`).
    static let version = 1

    private struct Body: Encodable {
        var v: Int
        var callId: String
        var callerId: UInt64
        var callerName: String?
        var video: Bool
        var ringDeadline: Int64
    }

    private var body: Body {
        Body(
            v: Self.version, callId: callId, callerId: callerId, callerName: callerName, video: video,
            ringDeadline: ringDeadline)
    }

    /// The `callapi` object as JSON text (what FCM data messages carry as a string).
    public var objectJSON: String { Self.json(body) }

    package static func json(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Structs of strings, numbers and booleans always encode.
        return String(decoding: (try? encoder.encode(value)) ?? Data(), as: UTF8.self)
    }
}

/// One push to send: a call for one device of the callee.
public struct PushJob: Sendable, Equatable {
    /// The callee.
    public var userId: String
    public var device: PushDevice
    public var call: CallPush

    public init(userId: String, device: PushDevice, call: CallPush) {
        self.userId = userId
        self.device = device
        self.call = call
    }
}

/// What the hub asks its push side to do.
public enum PushAction: Sendable, Equatable {
    /// Push a held call to one device.
    case deliver(PushJob)
    /// The call `callId` of `userId` was withdrawn or taken over signaling: drop its pushes not sent yet.
    case cancel(callId: String, userId: String)
    /// The registry changed: persist it.
    case saveDevices(DeviceRegistry)
}

/// A withdrawn call, kept so that the callee's sessions that log in learn it at once.
package struct Tombstone: Sendable, Equatable {
    package var callId: String
    package var reason: PushMark.Reason
    package var at: Int64
    package var expiresAt: Int64

    package init(callId: String, reason: PushMark.Reason, at: Int64, expiresAt: Int64) {
        self.callId = callId
        self.reason = reason
        self.at = at
        self.expiresAt = expiresAt
    }
}

/// A user's tombstone as the nodes of a cluster share it: kept by the node that withdrew the call, and by every
/// other one, so that the user learns it on whichever node they log in to (docs/scale-out.md).
package struct UserTombstone: Sendable, Equatable {
    package var userId: String
    package var tombstone: Tombstone

    package init(userId: String, tombstone: Tombstone) {
        self.userId = userId
        self.tombstone = tombstone
    }
}
