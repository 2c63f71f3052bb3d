import CallAPISignalProtocol
import CallAPIWire

/// The hub's relay: a `send` delivered to the target's sessions, held for it while it is offline (and pushed), or
/// refused; and the held messages delivered at its login.
extension HubState {

    mutating func relay(
        _ send: ClientFrame.Send, from id: SessionID, user: String, now: Int64, into actions: inout [HubAction]
    ) {
        func fail(_ reason: SignalErrorCode, _ message: String, into actions: inout [HubAction]) {
            // The ledger hears of a send before its sender does, so a sender that asks it next finds the call.
            report(
                send, from: id, user: user, reason == .peerOffline ? .offline : .failed(reason.rawValue), into: &actions
            )
            enqueue(
                .answer(.init(id: send.id, result: .failed, reason: reason, message: message)), to: id, into: &actions)
        }
        guard SignalProtocol.isValidUserId(send.to) else {
            return fail(.invalidTarget, "\"to\" must be 1-64 characters of A-Z a-z 0-9 . _ -", into: &actions)
        }
        guard send.to != user else {
            // With `copy`, a send to the sender's own user is a message to its other sessions (a device telling
            // the user's other devices it answered a call, docs/multi-device.md).
            guard send.copy == true else { return fail(.invalidTarget, "a user cannot send to itself", into: &actions) }
            let messageId = makeMessageId()
            let others = otherSessions(of: user, than: id)
            let remote = presence.remote.nodes(of: user)
            guard !others.isEmpty || !remote.isEmpty else {
                return fail(.peerOffline, "user \(user) has no other session", into: &actions)
            }
            copy(send, to: others, user: user, messageId: messageId, now: now, into: &actions)
            guard remote.isEmpty else {
                return forward(
                    send, from: id, user: user, messageId: messageId, copyOf: user, local: others.count,
                    remote: remote, now: now, into: &actions)
            }
            enqueue(
                .answer(.init(id: send.id, result: .delivered, messageId: messageId, sessions: others.count)), to: id,
                into: &actions)
            return
        }
        var ttl = send.ttl ?? 0
        guard ttl >= 0 else {
            return fail(.invalidFrame, "\"ttl\" must be 0 or more seconds", into: &actions)
        }
        if let problem = send.push?.problem {
            return fail(.invalidFrame, problem, into: &actions)
        }
        if let mark = send.push { settleRinging(mark, to: send.to, from: user, now: now, into: &actions) }
        let messageId = makeMessageId()
        let targets = presence.sessions(of: send.to)
        let remote = presence.remote.nodes(of: send.to)
        if !targets.isEmpty || !remote.isEmpty {
            let message = ServerFrame.message(
                .init(from: user, relayBody: send.relayBody, sentAt: now, messageId: messageId))
            // A target whose outbox cannot take the message is closed now, and the answer counts only the rest.
            let cost = FrameCost.bytes(of: message)
            func fits(_ target: SessionID) -> Bool { sessions.fits(target, cost: cost) }
            // Usually every target can take it: then `targets` itself is the list, without building another.
            var reached = targets
            var tooSlow: [SessionID] = []
            if !targets.allSatisfy(fits) {
                reached = targets.filter(fits)
                tooSlow = targets.filter { !fits($0) }
            }
            for target in reached { enqueue(message, to: target, cost: cost, into: &actions) }
            for target in tooSlow { dropSlowConsumer(target, now: now, into: &actions) }
            guard !reached.isEmpty || !remote.isEmpty else {
                return fail(
                    .slowConsumer,
                    "every session of user \(send.to) was too slow reading its socket and was disconnected",
                    into: &actions)
            }
            report(send, from: id, user: user, .delivered(reached), into: &actions)
            if let mark = send.push {
                pushSleepingDevices(send, mark, from: user, messageId: messageId, now: now, into: &actions)
            }
            if send.copy == true {
                let others = otherSessions(of: user, than: id)
                if !others.isEmpty {
                    copy(send, to: others, user: user, messageId: messageId, now: now, into: &actions)
                }
                let ownRemote = presence.remote.nodes(of: user)
                if !ownRemote.isEmpty {
                    let copies = ownRemote.map {
                        ClusterEnvelope(
                            node: $0.node, userId: user, from: user, body: send.relayBody, sentAt: now,
                            messageId: messageId, copyOf: send.to)
                    }
                    actions.append(.cluster(.forward(copies, receipt: nil)))
                }
            }
            guard remote.isEmpty else {
                return forward(
                    send, from: id, user: user, messageId: messageId, copyOf: nil, local: reached.count,
                    remote: remote, now: now, into: &actions)
            }
            enqueue(
                .answer(.init(id: send.id, result: .delivered, messageId: messageId, sessions: reached.count)), to: id,
                into: &actions)
            return
        }
        if let mark = send.push, mark.kind == .withdraw,
            let answer = withdrawHeldCall(mark, to: send.to, requestId: send.id, now: now, into: &actions)
        {
            // The ledger hears the withdrawing cancel too, or the call would end there as unanswered.
            report(send, from: id, user: user, .queued, into: &actions)
            actions.append(.push(.cancel(callId: mark.callId, userId: send.to)))
            enqueue(.answer(answer), to: id, into: &actions)
            return
        }
        // A call to a user with devices is held for the ring time (or the sender's shorter ttl) and pushed.
        let call = send.push.flatMap { mark in
            mark.kind == .call && devices.hasDevices(send.to) && pushPolicy.ringSeconds > 0 ? mark : nil
        }
        if call != nil {
            ttl = ttl > 0 ? min(ttl, pushPolicy.ringSeconds) : pushPolicy.ringSeconds
        }
        guard ttl > 0 else {
            return fail(.peerOffline, "user \(send.to) is offline", into: &actions)
        }
        let queue = held.queue(of: send.to)
        if let mark = call, let index = queue.firstIndex(where: { $0.pushedCall == mark.callId && $0.from == user }) {
            return replaceHeldCall(
                at: index, for: send.to, with: send, from: id, user: user, ttl: ttl, now: now,
                into: &actions)
        }
        guard queue.count < limits.maxHeldPerUser else {
            return fail(
                .queueFull, "user \(send.to) is offline and already has \(queue.count) held messages, the most kept",
                into: &actions)
        }
        let fromSender = held.count(from: user)
        guard fromSender < limits.maxHeldPerSender else {
            return fail(
                .queueFull, "you already have \(fromSender) messages held for offline users, the most kept per sender",
                into: &actions)
        }
        let bodyBytes = send.relayBody.escapedCount
        guard held.bytes + bodyBytes <= limits.maxHeldBytes else {
            return fail(
                .queueFull, "the server holds as many message bytes for offline users as it keeps", into: &actions)
        }
        let appliedTTL = min(ttl, limits.maxTTLSeconds)
        let expiresAt = now + Int64(appliedTTL) * 1000
        // The push payload's caller id is a CallAPI user id: a sender whose id is not a number is not pushed.
        let push = call.flatMap { mark in
            UInt64(user).map {
                CallPush(
                    callId: mark.callId, callerId: $0, callerName: mark.callerName, video: mark.video ?? false,
                    ringDeadline: expiresAt)
            }
        }
        let message = HeldMessages.Message(
            messageId: messageId, from: user, body: send.relayBody, sentAt: now, expiresAt: expiresAt,
            pushedCall: push?.callId)
        held.hold(message, for: send.to)
        report(send, from: id, user: user, .queued, into: &actions)
        park(
            message, for: send.to,
            answering: (id, .init(id: send.id, result: .queued, messageId: messageId, ttl: appliedTTL)),
            into: &actions)
        guard let push, appliedTTL > 0 else { return }
        for device in devices.devices(of: send.to) {
            actions.append(.push(.deliver(PushJob(userId: send.to, device: device.device, call: push))))
        }
    }

    /// A repeat of a call already held and pushed for `userId` (the caller's call message sent again, as CallAPI
    /// does until it hears back): replaces the held message's body and deadline and keeps its message id, which
    /// the answer carries again. Its devices are not pushed again: one push per device per call (docs/push.md).
    mutating func replaceHeldCall(
        at index: Int, for userId: String, with send: ClientFrame.Send, from id: SessionID, user: String, ttl: Int,
        now: Int64, into actions: inout [HubAction]
    ) {
        let queue = held.queue(of: userId)
        guard queue.indices.contains(index) else { return }
        let old = queue[index]
        guard held.bytes - old.body.escapedCount + send.relayBody.escapedCount <= limits.maxHeldBytes else {
            report(send, from: id, user: user, .failed(SignalErrorCode.queueFull.rawValue), into: &actions)
            enqueue(
                .answer(
                    .init(
                        id: send.id, result: .failed, reason: .queueFull,
                        message: "the server holds as many message bytes for offline users as it keeps")), to: id,
                into: &actions)
            return
        }
        let appliedTTL = min(ttl, limits.maxTTLSeconds)
        held.replace(
            at: index, for: userId, body: send.relayBody, sentAt: now, expiresAt: now + Int64(appliedTTL) * 1000)
        report(send, from: id, user: user, .queued, into: &actions)
        let answer = ServerFrame.Answer(id: send.id, result: .queued, messageId: old.messageId, ttl: appliedTTL)
        guard let replaced = held.queue(of: userId).first(where: { $0.messageId == old.messageId }) else {
            return enqueue(.answer(answer), to: id, into: &actions)
        }
        park(replaced, for: userId, answering: (id, answer), into: &actions)
    }

    /// The ledger's view of a `send` the hub handled (nothing unless ``reportsRelays``).
    func report(
        _ send: ClientFrame.Send, from id: SessionID, user: String, _ result: RelayResult,
        into actions: inout [HubAction]
    ) {
        guard reportsRelays else { return }
        actions.append(
            .relayed(RelayedSend(from: user, fromSession: id, to: send.to, relayBody: send.relayBody, result: result)))
    }

    /// Answers `send` from the session `id` with `body` from its target, without relaying it (the ledger's busy
    /// answer): the sender's send is answered delivered, `body` goes to the sender's sessions as a message from
    /// `send.to`.
    mutating func answerOnBehalf(
        _ id: SessionID, _ send: ClientFrame.Send, body: String, now: Int64, into actions: inout [HubAction]
    ) {
        guard admit(id, now: now, requestId: send.id, isSend: true, into: &actions) else { return }
        // A sender that may not send gets the refusal a relayed send would get (not logged in, token expired).
        guard let login = sessions[id]?.login, !login.lease.isExpired(at: now) else {
            return process(.send(send), from: id, now: now, into: &actions)
        }
        let user = login.userId
        let messageId = makeMessageId()
        let message = ServerFrame.message(.init(from: send.to, body: body, sentAt: now, messageId: messageId))
        placedCallSent(send, from: user, now: now, into: &actions)
        report(send, from: id, user: user, .answeredBusy, into: &actions)
        enqueue(
            .answer(.init(id: send.id, result: .delivered, messageId: makeMessageId(), sessions: 1)), to: id,
            into: &actions)
        toUser(user, message, into: &actions)
    }

    /// The sessions of `user` other than `id`: where a `send` with `copy` also goes, so a user's other devices
    /// learn what this one answered (docs/multi-device.md).
    func otherSessions(of user: String, than id: SessionID) -> [SessionID] {
        // Most users are on one device: then no list is built.
        let sessions = presence.sessions(of: user)
        guard sessions.count > 1 else { return [] }
        return sessions.filter { $0 != id }
    }

    mutating func copy(
        _ send: ClientFrame.Send, to sessions: [SessionID], user: String, messageId: String, now: Int64,
        into actions: inout [HubAction]
    ) {
        let copy = ServerFrame.message(
            .init(from: user, relayBody: send.relayBody, sentAt: now, messageId: messageId, to: send.to))
        for session in sessions { enqueue(copy, to: session, into: &actions) }
    }

    mutating func makeMessageId() -> String {
        defer { nextMessageNumber += 1 }
        // Written in place: `"m-" + String(number)` built two strings and joined them, ~450 instructions of every
        // relayed message (callgrind).
        let number = nextMessageNumber
        return String(unsafeUninitializedCapacity: messageIdPrefix.count + JSONLength.decimalLength(number)) { memory in
            var id = JSONMemory(UnsafeMutableRawBufferPointer(memory))
            for byte in messageIdPrefix { id.writeByte(byte) }
            id.writeInteger(number)
            return id.written
        }
    }

    mutating func deliverHeld(
        to userId: String, session id: SessionID, now: Int64, into actions: inout [HubAction]
    ) {
        let messages = held.takeAll(for: userId)
        unpark(messages, into: &actions)
        for message in messages {
            let outcome: ServerFrame.HeldResult.Outcome = message.expiresAt > now ? .delivered : .expired
            if let callId = message.pushedCall {
                // Taken over signaling (or over): its pushes not sent yet are pointless.
                actions.append(.push(.cancel(callId: callId, userId: userId)))
                if outcome == .expired { addTombstone(callId, .expired, for: userId, now: now, into: &actions) }
                if outcome == .delivered { keepRinging(message, callId: callId, for: userId, deliveredTo: id) }
            }
            if outcome == .delivered {
                enqueue(
                    .message(
                        .init(
                            from: message.from, relayBody: message.body, sentAt: message.sentAt,
                            messageId: message.messageId, held: true)), to: id, into: &actions)
            }
            toUser(
                message.from, .heldResult(.init(messageId: message.messageId, to: userId, result: outcome)),
                into: &actions)
        }
    }

    mutating func toUser(_ userId: String, _ frame: ServerFrame, into actions: inout [HubAction]) {
        for session in presence.sessions(of: userId) { enqueue(frame, to: session, into: &actions) }
    }
}
