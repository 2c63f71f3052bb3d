/// The one call an endpoint is in: everything the machine knows about it, gone when it ends.
package struct Call: Sendable, Equatable {
    package let id: String
    package let peer: UInt
    package let room: String
    package let type: CallType
    package let role: Role
    /// When the call started on this side: the caller at `call()`, the callee when it rang.
    package let startedAt: Int64
    package var stage = Stage.ringing
    package var media = Media.notJoined
    package var costs = CostMap()
    package var liveness: PeerLiveness
    /// The peer user's device this call is with (docs/multi-device.md): for the callee, the caller's device
    /// from the call message; for the caller, the device whose accept it took. Nil while the caller waits,
    /// and with peers that send no device id.
    package var peerDevice: String?
    /// The callee: the caller's call message carried the reliability mark and a device id, so the caller tells
    /// this user's devices which one answered (its settled notice) and they wait for its word.
    package let callerSendsNotice: Bool
    /// The callee, once accepted: its accept, repeated to its user's other devices.
    package var ownDeviceNotice: OwnDeviceNotice? {
        get { ownDeviceNoticeBox?.notice }
        set { ownDeviceNoticeBox = newValue.map(OwnDeviceNoticeBox.init) }
    }
    /// The notice, rarely set (multi-device callees), behind a reference: it holds a whole message, which
    /// would otherwise be copied with the call on every input.
    private var ownDeviceNoticeBox: OwnDeviceNoticeBox?
    /// Whether ``ownDeviceNotice`` is set, without copying it out.
    var hasOwnDeviceNotice: Bool { ownDeviceNoticeBox != nil }
    /// The call's liveness timers that are running (the ring timer is stopped by id wherever it may run).
    var armed = LivenessTimers()

    init(
        id: String, peer: UInt, room: String, type: CallType, role: Role, startedAt: Int64,
        media: Media = .notJoined, peerDevice: String? = nil, callerSendsNotice: Bool = false,
        peerKeepsAlive: Bool = false
    ) {
        self.peerDevice = peerDevice
        self.callerSendsNotice = callerSendsNotice
        self.id = id
        self.peer = peer
        self.room = room
        self.type = type
        self.role = role
        self.startedAt = startedAt
        self.media = media
        self.liveness = PeerLiveness(lastHeardAt: startedAt)
        liveness.keepsAlive = peerKeepsAlive
    }

    package enum Role: Sendable, Equatable {
        case caller, callee
    }

    /// How far the call got. Ringing: the caller waits for the accept, the callee for its user.
    package enum Stage: Sendable, Equatable {
        case ringing
        /// Both accepted; waiting for the remote first frame.
        case connecting
        case connected(since: Int64)

        var state: CallStateType {
            switch self {
            case .ringing: .calling
            case .connecting: .connecting
            case .connected: .connected
            }
        }
    }

    /// The call's media channel.
    package enum Media: Sendable, Equatable {
        case notJoined
        /// The join waits for the token provider.
        case awaitingToken(firstFrame: Bool)
        /// The engine was asked to join the call's room; `peerInRoom` while the engine reports the peer in it.
        case joined(firstFrame: Bool, peerInRoom: Bool)

        /// A join was asked (of the engine, or its token of the provider).
        var isJoining: Bool { self != .notJoined }

        package var firstFrameArrived: Bool {
            switch self {
            case .notJoined: false
            case .awaitingToken(let firstFrame), .joined(let firstFrame, _): firstFrame
            }
        }

        /// Whether the engine reports the peer in the call's room now.
        var peerInRoom: Bool {
            if case .joined(_, let peerInRoom) = self { return peerInRoom }
            return false
        }
    }

    /// What the peer has shown of being alive.
    package struct PeerLiveness: Sendable, Equatable {
        /// When the last message of this call came from the peer.
        var lastHeardAt: Int64
        /// The peer acknowledges and keeps alive (its messages in this call carry the reliability mark).
        var keepsAlive = false
        /// Our recent keep-alives' message ids: an ack of one that says "not in a call" means the peer left.
        var keepAliveIds: [Int] = []
    }

    package var isCaller: Bool { role == .caller }

    mutating func recordCost(_ stage: CostMap.Stage, now: Int64) {
        costs.record(stage, startedAt: startedAt, now: now)
    }
}

/// An ``OwnDeviceNotice`` kept by reference in a ``Call``; immutable, so a changed notice is a new box.
private final class OwnDeviceNoticeBox: Sendable, Equatable {
    let notice: OwnDeviceNotice

    init(_ notice: OwnDeviceNotice) { self.notice = notice }

    static func == (lhs: OwnDeviceNoticeBox, rhs: OwnDeviceNoticeBox) -> Bool { lhs.notice == rhs.notice }
}
