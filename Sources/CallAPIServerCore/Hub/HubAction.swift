import CallAPISignalProtocol

/// What the hub asks its shell to do.
package enum HubAction: Sendable, Equatable {
    /// Write `frame` to the session.
    case send(SessionID, ServerFrame)
    /// Check the token's signature and claims, then report ``HubEvent/tokenChecked(_:requestId:purpose:result:)``.
    case verifyToken(SessionID, requestId: Int?, token: String, purpose: TokenPurpose)
    /// Close the session's socket with `code` (a `closing` frame has been sent before). The hub has already
    /// forgotten the session.
    case close(SessionID, code: UInt16, reason: SignalErrorCode)
    /// A `send` was handled (only when ``HubState/reportsRelays``): for the call ledger.
    case relayed(RelayedSend)
    /// A user's sessions on another node are gone (only when ``HubState/reportsRelays``, on a node of a cluster):
    /// for the call ledger, which knew them as this stand-in (``SessionID/remote(node:user:)``).
    case remoteSessionsGone(SessionID)
    /// Read the call ledger for the session's user, then report ``HubEvent/ledgerAnswered(_:_:)``.
    case queryCalls(SessionID, userId: String, ClientFrame.CallsRequest)
    /// Keep a call report in the call ledger, then report ``HubEvent/ledgerAnswered(_:_:)`` (`reported` or `error`).
    case storeReport(SessionID, StoredCallReport)
    /// Push work: deliver a held call to a device, cancel a call's unsent pushes, save the device registry.
    case push(PushAction)
    /// A server-placed call was not placed by its caller in time (or its caller's session closed): record it
    /// `failed` in the call ledger.
    case callNotPlaced(NotPlacedCall)
    /// Work for the cluster link: presence rows and messages for other nodes (only on a node of a cluster).
    case cluster(ClusterAction)
}
