@_spi(ServerShell) import CallAPIServerCore

// Declared in the shell's module, not beside the machine: the optimiser turns the shell's calls through
// ``SessionMachine`` into direct ones only where it sees the conformance. Declared in CallAPIServerCore, each
// event, written report and action cost a witness-table call (with the action copied for it).
extension HubEvent: SessionEvent {}

extension HubState: SessionMachine {
    /// The session whose `login` or `renew` carried the token, the request's id, and what the token is for.
    package typealias TokenCheckContext = (session: SessionID, requestId: Int?, purpose: TokenPurpose)

    package static func tokenChecked(_ context: TokenCheckContext, verdict: TokenCheck) -> HubEvent {
        .tokenChecked(context.session, requestId: context.requestId, purpose: context.purpose, result: verdict)
    }
}
