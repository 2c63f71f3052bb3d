extension HubEvent: SessionEvent {}

extension HubState: SessionMachine {
    /// The session whose `login` or `renew` carried the token, the request's id, and what the token is for.
    package typealias TokenCheckContext = (session: SessionID, requestId: Int?, purpose: TokenPurpose)

    // Inlinable: the endpoint shell asks this of every action it performs, a relayed message's `send` included.
    @inlinable
    package static func tokenCheck(orderedBy action: HubAction) -> (token: String, context: TokenCheckContext)? {
        guard case .verifyToken(let id, let requestId, let token, let purpose) = action else { return nil }
        return (token, (id, requestId, purpose))
    }

    package static func tokenChecked(_ context: TokenCheckContext, verdict: TokenCheck) -> HubEvent {
        .tokenChecked(context.session, requestId: context.requestId, purpose: context.purpose, result: verdict)
    }
}
