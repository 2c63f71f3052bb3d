extension ChannelEvent: SessionEvent {}

extension ChannelState: SessionMachine {
    /// The connection whose `join` or `renew` carried the token, and what the token is for.
    package typealias TokenCheckContext = (connection: SessionID, purpose: ChannelTokenPurpose)

    // Inlinable: the endpoint shell asks this of every action it performs, a relayed message's `send` included.
    @inlinable
    package static func tokenCheck(orderedBy action: ChannelAction) -> (token: String, context: TokenCheckContext)? {
        guard case .verifyToken(let id, let token, let purpose) = action else { return nil }
        return (token, (id, purpose))
    }

    package static func tokenChecked(_ context: TokenCheckContext, verdict: ChannelTokenCheck) -> ChannelEvent {
        .tokenChecked(context.connection, purpose: context.purpose, result: verdict)
    }
}
