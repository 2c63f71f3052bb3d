@_spi(ServerShell) import CallAPIServerCore

// Declared in the shell's module, not beside the machine: the optimiser turns the shell's calls through
// ``SessionMachine`` into direct ones only where it sees the conformance. Declared in CallAPIServerCore, each
// event, written report and action cost a witness-table call (with the action copied for it).
extension CallAPIServerCore.ChannelEvent: SessionEvent {}

extension ChannelState: SessionMachine {
    /// The connection whose `join` or `renew` carried the token, and what the token is for.
    package typealias TokenCheckContext = (connection: SessionID, purpose: ChannelTokenPurpose)

    package static func tokenChecked(
        _ context: TokenCheckContext, verdict: ChannelTokenCheck
    ) -> CallAPIServerCore.ChannelEvent {
        .tokenChecked(context.connection, purpose: context.purpose, result: verdict)
    }
}
