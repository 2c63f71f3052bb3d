import CallAPI

/// The one call a legacy endpoint is in. Messages are matched to it by user only, as the deployed clients
/// do (docs/spec/wire-format.md, shortfall 1).
public struct LegacyCall: Sendable, Equatable {
    /// The other user of the call.
    public var peer: UInt
    /// The call's id: its own for a call it placed, the caller's for one it answers.
    public var callId: String
    /// The RTC channel of the call (the caller's room).
    public var room: String
    public var type: CallType
    /// Whether it placed the call.
    public var isCaller: Bool
    /// The caller has accepted from the start; the callee once it accepts.
    public var localAccepted: Bool
    /// The peer's first frame has been decoded.
    public var firstFrameArrived = false
}

/// Where a legacy endpoint stands; each in-call case owns its call.
public enum LegacyCallState: Sendable, Equatable {
    /// In no call.
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

    /// The current call, in any call state.
    public var call: LegacyCall? {
        switch self {
        case .prepared: nil
        case .calling(let call), .connecting(let call), .connected(let call): call
        }
    }
}
