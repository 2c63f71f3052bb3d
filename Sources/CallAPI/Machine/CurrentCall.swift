/// The one call an endpoint is in: everything the machine knows about it, cleared when it ends.
struct CurrentCall: Sendable, Equatable {
    var callId: String
    var peer: UInt
    var room: String
    var type: CallType
    var isCaller: Bool
    /// The caller has accepted from the start; the callee when it calls `accept`.
    var localAccepted: Bool
    /// The callee has accepted from the caller's point of view; always true for the callee.
    var remoteAccepted: Bool
    var firstFrameArrived = false
    /// A join of `room` was asked of the engine (or its token of the provider).
    var joinedRTC = false
    /// The join waits for the token provider.
    var awaitingToken = false
    /// When the call started on this side: the caller at `call()`, the callee when it rang.
    var startedAt: Int64
    var connectedAt: Int64?
    var costs = CostMap()
    /// The peer acknowledges and keeps alive (its messages in this call carry the reliability mark).
    var peerReliable = false
    /// When the last message of this call came from the peer.
    var lastHeardAt: Int64 = 0
    var keepAliveArmed = false
    var silenceArmed = false
    var remoteLeftArmed = false
    /// Our recent keep-alives' message ids: an ack of one that says "not in a call" means the peer left.
    var keepAliveIds: [Int] = []
    /// The peer user's device this call is with (docs/multi-device.md): for the callee, the caller's device
    /// from the call message; for the caller, the device whose accept it took. Nil while the caller waits,
    /// and with peers that send no device id.
    var peerDevice: String?
}

/// Milliseconds from a call's start to each stage, first occurrence only.
struct CostMap: Sendable, Equatable {
    static let remoteUserRecvCall = "remoteUserRecvCall"
    static let acceptCall = "acceptCall"
    static let localUserJoinChannel = "localUserJoinChannel"
    static let localFirstFrameDidCapture = "localFirstFrameDidCapture"
    static let localFirstFrameDidPublish = "localFirstFrameDidPublish"
    static let remoteUserJoinChannel = "remoteUserJoinChannel"
    static let recvFirstFrame = "recvFirstFrame"

    private(set) var stages: [String: Int64] = [:]

    mutating func record(_ stage: String, startedAt: Int64, now: Int64) {
        if stages[stage] == nil { stages[stage] = max(0, now - startedAt) }
    }

    var json: JSONValue { .object(stages.mapValues { .int(Int($0)) }) }
}
