extension ServerFrame {
    /// A server frame's kind. The raw value is its `type` string on the wire: the one place each is written, read
    /// by the decoders, the encoders and the server alike.
    public enum Kind: String, Sendable, CaseIterable {
        case welcome
        case answer
        case message
        case heldResult = "held_result"
        case presence
        case presenceChanged = "presence_changed"
        case tokenWillExpire = "token_will_expire"
        case renewed
        case pong
        case error
        case closing
        case calls
        case reported
        case devices
        case callWithdrawn = "call_withdrawn"
        case localInvitation = "local_invitation"
        case remoteInvitation = "remote_invitation"
        case placeCall = "place_call"
        case matched
        case matchQueue = "match_queue"
    }
}
