extension ClientFrame {
    /// A client frame's kind. The raw value is its `type` string on the wire: the one place each is written, read
    /// by the decoders, the encoders and the server alike.
    public enum Kind: String, Sendable, CaseIterable {
        case login
        case send
        case renew
        case users
        case subscribe
        case unsubscribe
        case ping
        case logout
        case calls
        case report
        case registerDevice = "register_device"
        case devices
        case removeDevice = "remove_device"
        case invite
        case invitationReceived = "invitation_received"
        case cancelInvitation = "cancel_invitation"
        case acceptInvitation = "accept_invitation"
        case refuseInvitation = "refuse_invitation"
        case acknowledgeAccept = "acknowledge_accept"
        case matchEnter = "match_enter"
        case matchLeave = "match_leave"
    }
}
