import CallAPI

/// The one call a legacy endpoint is in. Messages are matched to it by user only, as the deployed clients
/// do (wire-format.md, shortfall 1).
public struct LegacyCall: Sendable, Equatable {
    public var peer: UInt
    public var callId: String
    public var room: String
    public var type: CallType
    public var isCaller: Bool
    /// The caller has accepted from the start; the callee once it accepts.
    public var localAccepted: Bool
    public var firstFrameArrived = false
}

/// Where a legacy endpoint stands; each in-call case owns its call.
public enum LegacyCallState: Sendable, Equatable {
    case prepared
    case calling(LegacyCall)
    case connecting(LegacyCall)
    case connected(LegacyCall)

    /// The public state value the deployed clients report.
    public var type: CallStateType {
        switch self {
        case .prepared: .prepared
        case .calling: .calling
        case .connecting: .connecting
        case .connected: .connected
        }
    }

    public var call: LegacyCall? {
        switch self {
        case .prepared: nil
        case .calling(let call), .connecting(let call), .connected(let call): call
        }
    }
}
