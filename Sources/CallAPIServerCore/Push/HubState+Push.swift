import CallAPISignalProtocol

/// The hub's push rules: withdrawing held calls, tombstones, the `devices` answer.
package extension HubState {
    /// The `devices` frame for `userId`.
    func devicesFrame(of userId: String, requestId: Int?) -> ServerFrame {
        .devices(.init(id: requestId, devices: devices.devices(of: userId).map(\.summary)))
    }

    /// The tombstones of `userId` not expired at `now`, as frames' contents.
    func liveTombstones(of userId: String, now: Int64) -> [ServerFrame.CallWithdrawn] {
        held.liveTombstones(of: userId, now: now).map { .init(callId: $0.callId, reason: $0.reason, at: $0.at) }
    }

    /// Keeps a tombstone for `callId` (replacing an earlier one for the same call), dropping the oldest past the
    /// per-user limit. On a node of a cluster it is written for the other nodes too.
    mutating func addTombstone(
        _ callId: String, _ reason: PushMark.Reason, for userId: String, now: Int64, into actions: inout [HubAction]
    ) {
        let tombstone = Tombstone(
            callId: callId, reason: reason, at: now, expiresAt: now + Int64(pushPolicy.tombstoneSeconds) * 1000)
        held.addTombstone(tombstone, for: userId, maxPerUser: pushPolicy.maxTombstonesPerUser, now: now)
        if case .node = topology {
            actions.append(.cluster(.tombstone(UserTombstone(userId: userId, tombstone: tombstone))))
        }
    }

    /// Tombstones another node of the cluster kept: each new one is kept here too, and the user's sessions here
    /// learn it at once (they may have logged in here before it was read).
    mutating func tombstonesReported(_ reported: [UserTombstone], now: Int64, into actions: inout [HubAction]) {
        for entry in reported where entry.tombstone.expiresAt > now {
            guard !held.hasTombstone(of: entry.userId, callId: entry.tombstone.callId) else { continue }
            held.addTombstone(
                entry.tombstone, for: entry.userId, maxPerUser: pushPolicy.maxTombstonesPerUser, now: now)
            let frame = ServerFrame.callWithdrawn(
                .init(callId: entry.tombstone.callId, reason: entry.tombstone.reason, at: entry.tombstone.at))
            for session in presence.sessions(of: entry.userId) { enqueue(frame, to: session, into: &actions) }
        }
    }

    /// A `withdraw` for an offline user: when the call `mark.callId` is held for `userId` as a pushed call, drops it
    /// and keeps a tombstone, and returns the `queued` answer for the sender (the tombstone waits for the user; the
    /// caller cancels the call's unsent pushes). Nil when no such call is held: the message is then held or refused
    /// like any other.
    mutating func withdrawHeldCall(
        _ mark: PushMark, to userId: String, requestId: Int, now: Int64, into actions: inout [HubAction]
    ) -> ServerFrame.Answer? {
        guard let withdrawn = held.remove(for: userId, where: { $0.pushedCall == mark.callId }) else { return nil }
        unpark([withdrawn], into: &actions)
        addTombstone(mark.callId, mark.reason ?? .cancelled, for: userId, now: now, into: &actions)
        return ServerFrame.Answer(
            id: requestId, result: .queued, messageId: makeMessageId(), ttl: pushPolicy.tombstoneSeconds)
    }
}
