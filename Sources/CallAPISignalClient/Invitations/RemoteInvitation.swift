/// An invitation to this user (Agora RTM v1's `RemoteInvitation`), as ``InvitationEvent``s report it.
public struct RemoteInvitation: Sendable, Equatable {
    /// The server's id of the invitation.
    public let invitationId: String
    /// Who invites, as the server authenticated them.
    public let callerId: String
    /// What the caller said.
    public let content: String
    /// The channel the call would use.
    public let channelId: String
    /// Where the invitation stands.
    public internal(set) var state: RemoteInvitationState
    /// The response this user gave, once it accepted or refused ("" before).
    public internal(set) var response: String

    init(
        invitationId: String, callerId: String, content: String, channelId: String,
        state: RemoteInvitationState = .invitationReceived, response: String = ""
    ) {
        self.invitationId = invitationId
        self.callerId = callerId
        self.content = content
        self.channelId = channelId
        self.state = state
        self.response = response
    }
}
