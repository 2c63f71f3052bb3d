extension ChannelClientFrame {
    /// A channel client frame's kind. The raw value is its `type` string on the wire: the one place each is written, read
    /// by the decoders, the encoders and the server alike.
    public enum Kind: String, Sendable, CaseIterable {
        case join
        case signal
        case renew
        case leave
    }
}
