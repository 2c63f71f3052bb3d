import CallAPISignalProtocol

/// A call in progress as a cluster node publishes it (docs/scale-out.md, "The ledger across nodes"): what another
/// node needs to finish its record when the node that recorded it dies or leaves. Sessions are not in it: they were
/// the dead node's.
package struct LiveCallSnapshot: Sendable, Equatable, Codable {
    package var callId: String
    package var caller: String
    package var callee: String
    package var media: CallMedia
    package var roomId: String?
    package var startedAt: Int64
    /// When the callee's first device rang; absent while the call was held for an offline callee.
    package var rangAt: Int64?
    /// When the callee accepted; absent while it rang.
    package var acceptedAt: Int64?
    package var devices: [CallDevice]
    /// When a ringing call was last heard (its ring timeout counts from it); for an accepted call, when it was
    /// accepted. Not every message's time: a call's keep-alives would change its snapshot every second.
    package var lastHeard: Int64

    package init(
        callId: String, caller: String, callee: String, media: CallMedia, roomId: String?, startedAt: Int64,
        rangAt: Int64?, acceptedAt: Int64?, devices: [CallDevice], lastHeard: Int64
    ) {
        self.callId = callId
        self.caller = caller
        self.callee = callee
        self.media = media
        self.roomId = roomId
        self.startedAt = startedAt
        self.rangAt = rangAt
        self.acceptedAt = acceptedAt
        self.devices = devices
        self.lastHeard = lastHeard
    }
}

/// Calls another node recorded, now this node's to finish.
package struct AdoptedCalls: Sendable, Equatable {
    /// The node that recorded them (dead, or gone).
    package var node: String
    package var calls: [LiveCallSnapshot]

    package init(node: String, calls: [LiveCallSnapshot]) {
        self.node = node
        self.calls = calls
    }
}
