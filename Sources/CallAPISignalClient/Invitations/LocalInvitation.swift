/// An invitation this client sent (Agora RTM v1's `LocalInvitation`), as ``SignalClient/sendInvitation(to:content:channelId:)``
/// returns it and ``InvitationEvent``s report it.
public struct LocalInvitation: Sendable, Equatable {
    /// The server's id of the invitation.
    public let invitationId: String
    /// The user invited.
    public let calleeId: String
    /// What the caller told the callee.
    public let content: String
    /// The channel the call would use.
    public let channelId: String
    /// Where the invitation stands.
    public internal(set) var state: LocalInvitationState
    /// The callee's response, once it accepted or refused ("" before).
    public internal(set) var response: String

    init(
        invitationId: String, calleeId: String, content: String, channelId: String,
        state: LocalInvitationState = .sentToRemote, response: String = ""
    ) {
        self.invitationId = invitationId
        self.calleeId = calleeId
        self.content = content
        self.channelId = channelId
        self.state = state
        self.response = response
    }
}
