extension ChannelServerFrame {
    /// A channel server frame's kind. The raw value is its `type` string on the wire: the one place each is written, read
    /// by the decoders, the encoders and the server alike.
    public enum Kind: String, Sendable, CaseIterable {
        case joined
        case joinFailed
        case memberJoined
        case memberLeft
        case signal
        case signalFailed
        case tokenWillExpire
        case renewed
        case error
        case removed
    }
}
