import CallAPISignalProtocol

/// Pushes to the devices of a user who is online elsewhere (docs/push.md): a call rings the user's sessions over
/// signaling and is pushed to each registered device no session names; the device that answers or declines, or the
/// caller's cancel, withdraws those pushes with a tombstone saying why.
extension HubState {
    /// The user's registered devices that no session of theirs names, on this node or another of a cluster, when
    /// every session named its device; `nil` when one did not (the old rule then holds: no push while the user is
    /// online).
    func sleepingDevices(of userId: String) -> [DeviceRegistry.Entry]? {
        var awake: Set<String> = []
        for session in presence.sessions(of: userId) {
            guard let deviceId = sessions[session]?.login?.deviceId else { return nil }
            awake.insert(deviceId)
        }
        for node in presence.remote.nodes(of: userId) {
            for session in node.ids {
                guard let deviceId = node.devices[session] else { return nil }
                awake.insert(deviceId)
            }
        }
        return devices.devices(of: userId).filter { !awake.contains($0.device.deviceId) }
    }

    /// A call relayed to `send.to`'s online sessions: pushed to their devices with no session, once per call (a
    /// repeat only refreshes the call kept for a pushed device that logs in).
    mutating func pushSleepingDevices(
        _ send: ClientFrame.Send, _ mark: PushMark, from user: String, messageId: String, now: Int64,
        into actions: inout [HubAction]
    ) {
        guard mark.kind == .call, pushPolicy.ringSeconds > 0, devices.hasDevices(send.to),
            let callerId = UInt64(user)
        else { return }
        if let kept = ringing.ring(of: send.to, callId: mark.callId) {
            guard kept.from == user else { return }
            return ringing.replaceBody(of: mark.callId, for: send.to, with: send.relayBody, sentAt: now)
        }
        guard let sleeping = sleepingDevices(of: send.to), !sleeping.isEmpty,
            // The kept calls share the held messages' budget: past it, the sleeping devices are not pushed (the call
            // still rings on the sessions).
            held.bytes + ringing.bytes + send.relayBody.escapedCount <= limits.maxHeldBytes
        else { return }
        // A sender's shorter ttl wins, as for a held call.
        let ttl = send.ttl ?? 0
        let ringSeconds = ttl > 0 ? min(ttl, pushPolicy.ringSeconds) : pushPolicy.ringSeconds
        let expiresAt = now + Int64(ringSeconds) * 1000
        ringing.add(
            RingingPushes.Ring(
                callId: mark.callId, from: user, devices: sleeping.map(\.device.deviceId), body: send.relayBody,
                messageId: messageId, sentAt: now, expiresAt: expiresAt),
            for: send.to, maxPerUser: limits.maxHeldPerUser)
        let push = CallPush(
            callId: mark.callId, callerId: callerId, callerName: mark.callerName, video: mark.video ?? false,
            ringDeadline: expiresAt)
        for entry in sleeping {
            actions.append(.push(.deliver(PushJob(userId: send.to, device: entry.device, call: push))))
        }
    }

    /// A withdraw (the caller's cancel, to the callee) or an answer (the callee's accept or decline, from the callee)
    /// ends the pushes of a call that rang the callee online: the ones not sent yet are dropped, and a tombstone
    /// tells the pushed devices why when they log in.
    mutating func settleRinging(
        _ mark: PushMark, to target: String, from user: String, now: Int64,
        into actions: inout [HubAction]
    ) {
        let callee: String
        switch mark.kind {
        case .call: return
        case .withdraw: callee = target
        case .answer: callee = user
        }
        // Only the caller withdraws its call.
        guard let ring = ringing.ring(of: callee, callId: mark.callId), mark.kind == .answer || ring.from == user,
            ringing.remove(mark.callId, of: callee) != nil
        else { return }
        actions.append(.push(.cancel(callId: mark.callId, userId: callee)))
        addTombstone(mark.callId, mark.reason ?? .cancelled, for: callee, now: now, into: &actions)
    }

    /// A session of `userId` on push device `device` logged in: the calls pushed to that device that still ring are
    /// delivered to it, as held messages are.
    mutating func deliverRinging(
        to userId: String, device: String, session id: SessionID, now: Int64, into actions: inout [HubAction]
    ) {
        for ring in ringing.rings(of: userId, pushing: device) where ring.expiresAt > now {
            enqueue(
                .message(
                    .init(
                        from: ring.from, relayBody: ring.body, sentAt: ring.sentAt, messageId: ring.messageId,
                        held: true)), to: id, into: &actions)
        }
    }

    /// After a presence read: the calls kept here for pushed devices that have since logged in to another node are
    /// handed to those sessions, once each, through the mailbox (only to the session naming the device).
    mutating func handOverRinging(now: Int64, into actions: inout [HubAction]) {
        guard ringing.count > 0, !presence.remote.isEmpty else { return }
        var envelopes: [ClusterEnvelope] = []
        for userId in ringing.users {
            for node in presence.remote.nodes(of: userId) {
                for session in node.ids {
                    guard let device = node.devices[session] else { continue }
                    for ring in ringing.rings(of: userId, pushing: device) where ring.expiresAt > now {
                        let remote = RingingPushes.RemoteSession(node: node.node, id: session)
                        guard ringing.handOver(ring.callId, of: userId, to: remote) else { continue }
                        envelopes.append(
                            ClusterEnvelope(
                                node: node.node, userId: userId, from: ring.from, body: ring.body, sentAt: ring.sentAt,
                                messageId: ring.messageId, held: true, device: device))
                    }
                }
            }
        }
        if !envelopes.isEmpty { actions.append(.cluster(.forward(envelopes, receipt: nil))) }
    }

    /// A held, pushed call delivered to the first session of its callee to log in: the callee's other devices were
    /// pushed too, so the call is kept as ringing them until it is answered, declined, cancelled or over.
    mutating func keepRinging(
        _ message: HeldMessages.Message, callId: String, for userId: String, deliveredTo id: SessionID
    ) {
        let here = sessions[id]?.login?.deviceId
        let others = devices.devices(of: userId).map(\.device.deviceId).filter { $0 != here }
        guard !others.isEmpty, ringing.ring(of: userId, callId: callId) == nil else { return }
        ringing.add(
            RingingPushes.Ring(
                callId: callId, from: message.from, devices: others, body: message.body, messageId: message.messageId,
                sentAt: message.sentAt, expiresAt: message.expiresAt),
            for: userId, maxPerUser: limits.maxHeldPerUser)
    }
}
