/// What the cluster link tells the hub (docs/scale-out.md).
package enum ClusterEvent: Sendable {
    /// The other nodes' sessions as the link last read them.
    case remotePresence(RemotePresence)
    /// The messages of a ``ClusterAction/forward(_:receipt:)`` are in their nodes' mailboxes.
    case forwarded(ForwardReceipt)
    /// They could not be written (the database is unreachable, or this node lost its membership).
    case forwardFailed(ForwardReceipt, reason: String)
    /// Messages from other nodes for this node's sessions, in mailbox order.
    case arrived([ClusterEnvelope])
    /// Calls placed by the server through other nodes for callers on this one, oldest first.
    case placements([ForwardedPlacement])
    /// Device lists written since the link last read them, oldest first (this node's own among them).
    case devices([UserDevices])
    /// The other nodes' tombstones not expired, as the link last read them.
    case tombstones([UserTombstone])
    /// Steps of invitations other nodes passed to this one, in the order they were written.
    case invitations([InvitationRelay])
    /// What came of a ``ClusterAction/matchEnter(_:)``.
    case matchEntered(ClusterMatchEntry, ClusterMatchOutcome)
}
