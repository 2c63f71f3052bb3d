import CallAPISignalProtocol

/// What ``InvitationMachine`` asks for: only frames, each to one session (the hub queues them in order, counting
/// each against its receiver's outbox).
package enum InvitationAction: Sendable, Equatable {
    /// Send `frame` to the session (on another node: through that node).
    case send(InvitationEndpoint, ServerFrame)
}
