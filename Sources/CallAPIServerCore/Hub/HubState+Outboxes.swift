import CallAPISignalProtocol

/// The hub's outboxes: every frame counted against its receiver where it is produced, and a slow consumer dropped.
extension HubState {
    /// Queues `frame` for session `id`: counts it against the session's outbox and appends the `send`. A frame that
    /// does not fit is not sent: the session is noted as a slow consumer (it takes no more frames) and closed when
    /// the event's other steps are done (``OutboxAccounting/nextSlowConsumer()``). A frame for a session the hub
    /// does not know (closed during this event) is appended uncounted; the shell has no socket for it.
    package mutating func enqueue(_ frame: ServerFrame, to id: SessionID, into actions: inout [HubAction]) {
        enqueue(frame, to: id, cost: nil, into: &actions)
    }

    /// ``enqueue(_:to:into:)`` with the frame's ``FrameCost``, when the caller has already computed it.
    mutating func enqueue(
        _ frame: ServerFrame, to id: SessionID, cost: Int?, into actions: inout [HubAction]
    ) {
        guard let index = sessions.index(forKey: id) else {
            actions.append(.send(id, frame))
            return
        }
        let cost = cost ?? FrameCost.bytes(of: frame)
        // What to remember about a relayed message in an outbox.
        var relayedMessage: RelayedMessage?
        if case .message(let message) = frame, message.held != true,
            let to = sessions.read(at: index, { $0.login?.userId })
        {
            relayedMessage = RelayedMessage(from: message.from, to: to, messageId: message.messageId)
        }
        if sessions.enqueue(id, at: index, cost: cost, relayed: relayedMessage) {
            actions.append(.send(id, frame))
        }
    }

    /// Closes a session that does not read its socket: no `closing` frame (it would wait behind the backlog; the
    /// close code says it), and the senders of relayed messages it never got are told (`held_result` `failed`).
    mutating func dropSlowConsumer(_ id: SessionID, now: Int64, into actions: inout [HubAction]) {
        guard let session = sessions[id] else { return }
        actions.append(.close(id, code: SignalCloseCode.slowConsumer, reason: .slowConsumer))
        remove(id, now: now, into: &actions)
        for message in session.outbox.unwritten {
            toUser(
                message.from,
                .heldResult(
                    .init(messageId: message.messageId, to: message.to, result: .failed, reason: .slowConsumer)),
                into: &actions)
        }
    }
}
