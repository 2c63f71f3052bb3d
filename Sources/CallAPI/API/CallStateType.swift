/// The state of a ``CallApiImpl`` endpoint. Raw values are those of the existing CallAPI clients.
public enum CallStateType: Int, Sendable, CaseIterable {
    /// Not initialized, or deinitialized.
    case idle = 0
    /// Ready to place or receive a call.
    case prepared = 1
    /// Ringing: a call was placed (caller) or received (callee) and is not yet accepted by both.
    case calling = 2
    /// Both sides accepted; waiting for the remote first frame.
    case connecting = 3
    /// In the call, media on screen.
    case connected = 4
    /// Something went wrong; call ``CallApiProtocol/prepareForCall(prepareConfig:completion:)`` again.
    case failed = 10

    /// Whether the endpoint holds a current call in this state.
    public var isInCall: Bool { self == .calling || self == .connecting || self == .connected }
}
