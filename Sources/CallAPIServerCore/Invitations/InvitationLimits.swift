/// The windows within which each side of an invitation must act, and how many may be pending. Times in
/// milliseconds; the defaults are Agora RTM v1's.
public struct InvitationLimits: Sendable, Equatable {
    /// The callee's sessions must acknowledge receiving an invitation within this time of its sending, or the
    /// caller gets `peer_no_response` (RTM v1: 30 s).
    public var receiveWindowMillis: Int64 = 30_000
    /// An invitation nobody accepted, refused or cancelled expires this long after it was sent (RTM v1: 60 s).
    public var expiryMillis: Int64 = 60_000
    /// After the callee accepts, the caller must acknowledge within this time, or the callee gets
    /// `accept_failure` (RTM v1 leaves it unnamed; 10 s here).
    public var acceptWindowMillis: Int64 = 10_000
    /// Invitations one session may have pending at once.
    public var maxPerCaller: Int = 16
    /// Invitations one user may have waiting for an answer at once.
    public var maxPerCallee: Int = 32

    public init() {}
}
