import CallAPISignalProtocol

/// The hub's side of server-placed calls and the match queue (docs/match.md): the checks that need the hub's
/// sessions, around ``MatchMachine``.
package extension HubState {
    /// Why the server cannot place `order` now, or `nil` when it can. (Busy is the call ledger's to say.)
    func placementProblem(_ order: PlaceCallOrder) -> PlaceCallRefusal? {
        if order.caller == order.callee { return .sameUser }
        // The caller's session is told to place the call: on this node, or on another of a cluster, which is
        // handed the order (docs/scale-out.md). The callee may be on any.
        if !presence.isOnline(order.caller) { return .offline(user: order.caller) }
        if !presence.isOnline(order.callee) { return .offline(user: order.callee) }
        return nil
    }

    /// Whether the placed call `callId` was handed to the caller's node (its caller has no session here).
    func placesElsewhere(_ order: PlaceCallOrder) -> Bool {
        placementProblem(order) == nil && presence.sessions(of: order.caller).isEmpty
    }

    /// Whether the placed call `callId` still waits for its caller's call message.
    func awaitsPlacement(of callId: String) -> Bool { match.placement(callId) != nil }

    /// Users waiting in the match queue.
    var matchWaitingCount: Int { match.waitingCount }

    /// Tells the caller's newest session to place the call, or hands the order to the node of a caller who has no
    /// session here (nothing when the order cannot be placed now).
    mutating func placeCall(_ order: PlaceCallOrder, callId: String, now: Int64, into actions: inout [HubAction]) {
        guard placementProblem(order) == nil else { return }
        guard let session = presence.sessions(of: order.caller).last else {
            guard let node = presence.remote.nodes(of: order.caller).first?.node else { return }
            actions.append(.cluster(.placeCall(ForwardedPlacement(node: node, order: order, callId: callId))))
            return
        }
        runMatch(.place(order, callId: callId, callerSession: session), now: now, into: &actions)
    }

    /// Notes a `send` that places a call the server asked for. Only a user with such a call pending has its sends
    /// read, so other traffic costs one dictionary look-up.
    mutating func placedCallSent(
        _ send: ClientFrame.Send, from user: String, now: Int64, into actions: inout [HubAction]
    ) {
        guard match.awaitsCall(from: user), let fields = CallMessageFields.parse(send.relayBody),
            case .call = fields.action
        else { return }
        runMatch(.callSent(from: user, to: send.to, callId: fields.callId), now: now, into: &actions)
    }
}
