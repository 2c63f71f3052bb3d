/// An invitation method's request, as the connection machine writes it.
enum InvitationRequest: Sendable, Equatable {
    case send(to: String, content: String, channelId: String)
    case cancel(invitationId: String)
    case accept(invitationId: String, response: String)
    case refuse(invitationId: String, response: String)
}
