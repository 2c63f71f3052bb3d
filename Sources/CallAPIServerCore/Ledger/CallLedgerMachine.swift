import CallAPISignalProtocol

/// The call ledger as a pure state machine: it reads the call messages the hub relays (docs/spec/wire-format.md)
/// and keeps each call in progress until it ends, then hands its ``CallRecord`` to the shell to save.
///
/// Only the vouched sender and receiver count: a message about a call is taken only from that call's caller or
/// callee. Memory is bounded by ``LedgerLimits/maxLiveCalls``; ended calls leave memory at once.
package struct CallLedgerMachine: Sendable {
    /// Where a call in progress stands.
    enum Phase: Sendable, Equatable {
        /// The call message was relayed; `rangAt` is `nil` while it is held for an offline callee.
        case ringing(rangAt: Int64?)
        /// The callee's accept was relayed from `session`.
        case accepted(rangAt: Int64?, at: Int64, session: SessionID)
    }

    /// A call in progress.
    struct LiveCall: Sendable, Equatable {
        let callId: String
        let caller: String
        let callee: String
        let media: CallMedia
        let roomId: String?
        let startedAt: Int64
        var phase: Phase
        var devices: [CallDevice]
        /// The participants' sessions still open.
        var sessions: Set<SessionID>
        /// When the last of `sessions` closed (`nil` while one is open).
        var goneSince: Int64?
        /// In a cluster: when the last of `sessions` on this node closed, while the others are on other nodes
        /// (`nil` while one here is open, and for a call taken over until a session here is heard).
        var awaySince: Int64? = nil
        /// When the last message of the call was relayed.
        var lastHeard: Int64
        /// The node that recorded the call before this one took it over (``adopt(_:now:)``), if one did.
        var takenOverFrom: String? = nil
    }

    package let limits: LedgerLimits
    private(set) var calls: [String: LiveCall] = [:]
    /// Indexes over `calls` (kept beside them so that session closes and busy checks are not scans).
    private var callsBySession: [SessionID: Set<String>] = [:]
    private var acceptedCallsByUser: [String: Set<String>] = [:]
    /// Calls that ended lately: a message with one of their ids is not a new call.
    private var ended: EndedCalls
    /// Calls handed to another node lately (``LedgerAction/handOff(_:)``): a repeat of their call message here is not a
    /// new call, but one may come back to this node.
    private var handedOff: EndedCalls

    package init(limits: LedgerLimits = LedgerLimits()) {
        self.limits = limits
        ended = EndedCalls(keepMillis: limits.rememberEndedMillis, maxCount: limits.maxEndedCalls)
        handedOff = EndedCalls(keepMillis: limits.rememberEndedMillis, maxCount: limits.maxEndedCalls)
    }

    /// Calls in progress.
    package var liveCallCount: Int { calls.count }

    /// The accepted call `user` is in, if any: a call to that user can be answered busy on its behalf.
    package func busyCall(of user: String) -> String? {
        acceptedCallsByUser[user]?.min()
    }

    /// Every user in an accepted call, with the call (the lowest id, as ``busyCall(of:)``) and its other user, in
    /// user order: what a node of a cluster publishes for the others' busy answers.
    package var busyUsers: [BusyUser] {
        acceptedCallsByUser.keys.sorted().compactMap { user in
            guard let callId = busyCall(of: user), let call = calls[callId] else { return nil }
            return BusyUser(user: user, callId: callId, peer: call.caller == user ? call.callee : call.caller)
        }
    }

    /// Whether `callId` is a call in progress between `a` and `b` (either way round).
    package func isCall(_ callId: String, between a: String, and b: String) -> Bool {
        guard let call = calls[callId] else { return false }
        return Set([call.caller, call.callee]) == Set([a, b])
    }

    // MARK: - Events

    /// Applies `input` at `now` (ms since 1970) and returns what to do.
    package mutating func handle(_ input: LedgerInput, now: Int64) -> [LedgerAction] {
        switch input {
        case .relayed(let send):
            guard let fields = CallMessageFields.parse(send.relayBody) else { return [] }
            return relayed(send, fields, now: now)
        case .sessionClosed(let session):
            sessionClosed(session, now: now)
            return []
        case .tick:
            return tick(now: now)
        case .notPlaced(let call):
            return notPlaced(call, now: now)
        case .adopted(let adopted):
            return adopt(adopted, now: now)
        }
    }

    /// The calls in progress as a cluster node publishes them for the others, in call id order.
    package var liveCallSnapshots: [LiveCallSnapshot] {
        calls.keys.sorted().compactMap { calls[$0]?.snapshot }
    }

    /// Takes over `adopted`'s calls with no session open: gone since `now`, so that the liveness window counts from
    /// the takeover, and the ring timeout from when the call was last heard, as on the node that recorded it.
    private mutating func adopt(_ adopted: AdoptedCalls, now: Int64) -> [LedgerAction] {
        var actions: [LedgerAction] = []
        for snapshot in adopted.calls where calls[snapshot.callId] == nil && !ended.contains(snapshot.callId) {
            let phase: Phase =
                if let acceptedAt = snapshot.acceptedAt {
                    // The answering session was the dead node's: its stand-in takes its place.
                    .accepted(
                        rangAt: snapshot.rangAt, at: acceptedAt,
                        session: .remote(node: adopted.node, user: snapshot.callee))
                } else {
                    .ringing(rangAt: snapshot.rangAt)
                }
            let call = LiveCall(
                callId: snapshot.callId, caller: snapshot.caller, callee: snapshot.callee, media: snapshot.media,
                roomId: snapshot.roomId, startedAt: snapshot.startedAt, phase: phase, devices: snapshot.devices,
                sessions: [], goneSince: now, lastHeard: snapshot.lastHeard, takenOverFrom: adopted.node)
            actions += makeRoom(now: now)
            calls[call.callId] = call
            if call.isAccepted {
                acceptedCallsByUser[call.caller, default: []].insert(call.callId)
                acceptedCallsByUser[call.callee, default: []].insert(call.callId)
            }
        }
        return actions
    }

    private mutating func relayed(_ send: RelayedSend, _ fields: CallMessageFields, now: Int64) -> [LedgerAction] {
        switch fields.action {
        case .call(let media, let roomId):
            return called(send, fields, media: media, roomId: roomId, now: now)
        case .reject(busy: true):
            // The deployed clients stamp a busy reject with their own current call's id: match it by the pair too.
            let callId =
                calls[fields.callId].map { _ in fields.callId }
                ?? calls.values.filter { $0.caller == send.to && $0.callee == send.from && !$0.isAccepted }
                .map(\.callId).min()
            guard let callId, var call = takeParticipantsCall(callId, send) else { return [] }
            call.heard(from: send.fromSession, user: send.from, deviceId: fields.deviceId, now: now)
            return end(call, outcome: .busy, by: send.from, reason: "calleeBusy", now: now)
        default:
            guard var call = takeParticipantsCall(fields.callId, send) else { return [] }
            index(send.fromSession, call.callId)
            call.heard(from: send.fromSession, user: send.from, deviceId: fields.deviceId, now: now)
            return advance(call, send, fields, now: now)
        }
    }

    /// Takes the call `callId` out of `calls` if the sender is its caller or callee and the receiver the other
    /// one; the caller puts it back or ends it. Taken out, not copied: a copy would share the call's session set
    /// and device list with the stored one, and the first change to either would copy them whole.
    private mutating func takeParticipantsCall(_ callId: String, _ send: RelayedSend) -> LiveCall? {
        guard let call = calls[callId],
            (send.from == call.caller && send.to == call.callee) || (send.from == call.callee && send.to == call.caller)
        else { return nil }
        return calls.removeValue(forKey: callId)
    }

    private mutating func called(
        _ send: RelayedSend, _ fields: CallMessageFields, media: CallMedia, roomId: String?, now: Int64
    ) -> [LedgerAction] {
        // A call that ended stays ended: its id coming back (a caller that sends a call the server already
        // recorded as not placed, a replayed message) is relayed, but neither recorded nor notified again.
        guard !ended.contains(fields.callId) else { return [] }
        // In a cluster, a call is recorded by the node its caller called from; the call message arriving at the
        // callee's node (from a stand-in session) is not a second call.
        guard !send.fromSession.isRemote || calls[fields.callId] != nil else { return [] }
        if let existing = calls[fields.callId] {
            // A repeat (a retry, or the same caller updating its room): only new sessions are news.
            guard existing.caller == send.from, existing.callee == send.to,
                var call = calls.removeValue(forKey: fields.callId)
            else { return [] }
            call.heard(from: send.fromSession, user: send.from, deviceId: fields.deviceId, now: now)
            if case .delivered(let sessions) = send.result {
                for session in sessions { call.rang(session, user: send.to) }
                if case .ringing(nil) = call.phase { call.phase = .ringing(rangAt: now) }
            }
            calls[call.callId] = call
            indexAll(call)
            return []
        }
        guard !handedOff.contains(fields.callId) else { return [] }
        var call = LiveCall(
            callId: fields.callId, caller: send.from, callee: send.to, media: media, roomId: roomId, startedAt: now,
            phase: .ringing(rangAt: nil), devices: [], sessions: [], goneSince: nil, lastHeard: now)
        call.devices.append(
            CallDevice(
                userId: send.from, session: send.fromSession.description, deviceId: fields.deviceId, ending: "called"))
        call.sessions.insert(send.fromSession)
        switch send.result {
        case .offline:
            return end(call, outcome: .missed, by: nil, reason: "calleeOffline", now: now)
        case .failed(let code):
            return end(call, outcome: .failed, by: nil, reason: "notDelivered:\(code)", now: now)
        case .answeredBusy:
            return end(call, outcome: .busy, by: nil, reason: "serverBusy", now: now)
        case .queued:
            break
        case .delivered(let sessions):
            call.phase = .ringing(rangAt: now)
            for session in sessions { call.rang(session, user: send.to) }
        }
        var actions = makeRoom(now: now)
        calls[call.callId] = call
        indexAll(call)
        actions.append(.notify(call.event(.ringing, at: now)))
        return actions
    }

    /// Ends the oldest call in progress when the ledger is full.
    private mutating func makeRoom(now: Int64) -> [LedgerAction] {
        guard calls.count >= limits.maxLiveCalls,
            let oldest = calls.values.min(by: { ($0.startedAt, $0.callId) < ($1.startedAt, $1.callId) })
        else { return [] }
        return end(oldest, outcome: .failed, by: nil, reason: "ledgerFull", now: now)
    }

    /// Applies a message to `call`, taken out of `calls`: puts it back, or ends it.
    private mutating func advance(
        _ call: consuming LiveCall, _ send: RelayedSend, _ fields: CallMessageFields, now: Int64
    ) -> [LedgerAction] {
        let fromCaller = send.from == call.caller
        switch (fields.action, call.phase) {
        case (.call, _), (.reject(busy: true), _), (.alive, _), (.settledNotice, _):
            break  // calls and busy rejects are handled in `relayed`; the rest only show the call is alive
        case (.accept, .ringing(let rangAt)):
            guard !fromCaller else { break }
            call.phase = .accepted(rangAt: rangAt, at: now, session: send.fromSession)
            call.setEnding(of: send.fromSession, "answered")
            call.setEndingOfOthers(user: call.callee, except: send.fromSession, "answeredElsewhere")
            calls[call.callId] = call
            acceptedCallsByUser[call.caller, default: []].insert(call.callId)
            acceptedCallsByUser[call.callee, default: []].insert(call.callId)
            return [.notify(call.event(.accepted, at: now)), .notify(call.event(.connected, at: now))]
        case (.accept, .accepted(_, _, let winner)):
            // A second device's accept lost the race to the first one.
            if !fromCaller && send.fromSession != winner {
                call.setEnding(of: send.fromSession, "answeredElsewhere")
            }
        case (.cancel(let byTimer), .ringing):
            if fromCaller {
                return byTimer
                    ? end(call, outcome: .missed, by: send.from, reason: "callerTimeout", now: now)
                    : end(call, outcome: .cancelled, by: send.from, reason: "callerCancelled", now: now)
            }
            // The callee's ring timer sends cancel with cancelCallByInternal 1 (call-behaviour.md).
            return byTimer
                ? end(call, outcome: .missed, by: send.from, reason: "calleeTimeout", now: now)
                : refused(call, send, now: now)
        case (.reject, .ringing):
            guard !fromCaller else { break }
            return refused(call, send, now: now)
        case (.hangup(let reason), .ringing):
            // A hangup before any accept: the sending side gave up (an RTC failure ends a call this way too).
            return fromCaller
                ? end(call, outcome: .cancelled, by: send.from, reason: reason ?? "callerHungUp", now: now)
                : refused(call, send, now: now)
        case (.hangup(let reason), .accepted):
            return end(call, outcome: .completed, by: send.from, reason: reason ?? "hangup", now: now)
        case (.cancel, .accepted), (.reject, .accepted):
            return end(call, outcome: .completed, by: send.from, reason: "endedAfterAccept", now: now)
        }
        calls[call.callId] = call
        return []
    }

    /// The callee refused on one device: the others end as rejected elsewhere.
    private mutating func refused(_ call: consuming LiveCall, _ send: RelayedSend, now: Int64) -> [LedgerAction] {
        call.setEnding(of: send.fromSession, "rejected")
        call.setEndingOfOthers(user: call.callee, except: send.fromSession, "rejectedElsewhere")
        return end(call, outcome: .rejected, by: send.from, reason: "calleeRejected", now: now)
    }

    /// A server-placed call that never started: a `failed` record with no devices, unless the call did start
    /// after all (its call message was answered busy on the callee's behalf, say).
    private mutating func notPlaced(_ placed: NotPlacedCall, now: Int64) -> [LedgerAction] {
        guard calls[placed.callId] == nil, !ended.contains(placed.callId) else { return [] }
        let call = LiveCall(
            callId: placed.callId, caller: placed.caller, callee: placed.callee, media: placed.media, roomId: nil,
            startedAt: now, phase: .ringing(rangAt: nil), devices: [], sessions: [], goneSince: nil, lastHeard: now)
        return end(call, outcome: .failed, by: nil, reason: placed.reason, now: now)
    }

    /// Forgets `call` and returns its record to save and the webhook events.
    private mutating func end(
        _ call: LiveCall, outcome: CallOutcome, by user: String?, reason: String, serverEnded: Bool = false,
        now: Int64
    ) -> [LedgerAction] {
        forget(call)
        ended.add(call.callId, now: now)
        let (rangAt, acceptedAt) = call.rangAndAcceptedAt
        let devices = call.devices.map { device in
            var device = device
            if ["called", "rang", "answered"].contains(device.ending) { device.ending = outcome.rawValue }
            return device
        }
        let record = CallRecord(
            callId: call.callId, caller: call.caller, callee: call.callee, media: call.media, roomId: call.roomId,
            startedAt: call.startedAt, rangAt: rangAt, acceptedAt: acceptedAt, connectedAt: acceptedAt, endedAt: now,
            endedBy: user, endReason: reason, outcome: outcome,
            durationMillis: acceptedAt.map { max(0, now - $0) } ?? 0, devices: devices)
        var actions: [LedgerAction] =
            serverEnded
            ? [
                .endRing(
                    AbandonedRing(
                        callId: call.callId, caller: call.caller, callee: call.callee,
                        callerDevice: call.devices.first { $0.userId == call.caller && $0.deviceId != nil }?.deviceId))
            ] : []
        actions.append(.save(record))
        func ending(_ kind: CallEvent.Kind) -> CallEvent {
            var event = call.event(kind, at: now, outcome: outcome)
            event.endReason = reason
            event.endedBy = user
            event.serverEnded = serverEnded ? true : nil
            return event
        }
        if outcome == .missed || outcome == .busy || (outcome == .cancelled && rangAt != nil) {
            actions.append(.notify(ending(.missed)))
        }
        actions.append(.notify(ending(.ended)))
        return actions
    }

    private mutating func forget(_ call: LiveCall) {
        calls[call.callId] = nil
        for session in call.sessions {
            callsBySession[session]?.remove(call.callId)
            if callsBySession[session]?.isEmpty == true { callsBySession[session] = nil }
        }
        for user in [call.caller, call.callee] {
            acceptedCallsByUser[user]?.remove(call.callId)
            if acceptedCallsByUser[user]?.isEmpty == true { acceptedCallsByUser[user] = nil }
        }
    }

    private mutating func index(_ session: SessionID, _ callId: String) {
        callsBySession[session, default: []].insert(callId)
    }

    private mutating func indexAll(_ call: LiveCall) {
        for session in call.sessions { index(session, call.callId) }
    }

    // MARK: - Sessions and time

    private mutating func sessionClosed(_ session: SessionID, now: Int64) {
        guard let callIds = callsBySession.removeValue(forKey: session) else { return }
        for callId in callIds {
            guard var call = calls[callId] else { continue }
            call.sessions.remove(session)
            if call.sessions.isEmpty { call.goneSince = now }
            if !session.isRemote, !call.sessions.contains(where: { !$0.isRemote }) { call.awaySince = now }
            calls[callId] = call
        }
    }

    private mutating func tick(now: Int64) -> [LedgerAction] {
        ended.expire(now: now)
        handedOff.expire(now: now)
        var actions: [LedgerAction] = []
        for callId in calls.keys.sorted() {
            guard let call = calls[callId] else { continue }
            if let handOff = limits.handOffMillis, let away = call.awaySince, now - away >= handOff,
                !call.sessions.isEmpty
            {
                // A participant is online on another node, and none here: their messages pass there now. The
                // snapshot goes to the node that takes the call over, which records the rest as this one would have.
                // (With every session gone, the liveness window below applies as on a single server.)
                let snapshot = call.snapshot
                forget(call)
                handedOff.add(callId, now: now)
                actions.append(.handOff(snapshot))
            } else if let gone = call.goneSince, now - gone >= limits.livenessMillis {
                // A call taken over from a dead node whose participants were not heard here: they may go on
                // talking through other nodes, which do not report to this record.
                let reason = call.takenOverFrom == nil ? "participantsGone" : "recordingNodeLost"
                actions += end(call, outcome: .dropped, by: nil, reason: reason, now: now)
            } else if !call.isAccepted, now - call.lastHeard >= limits.ringTimeoutMillis {
                // Neither side spoke of the call for the ring window: both may be waiting on each other forever
                // (hung, cut off, or without a ring timer), so the server ends it for them.
                actions += end(call, outcome: .missed, by: nil, reason: "noAnswer", serverEnded: true, now: now)
            }
        }
        return actions
    }
}

extension CallLedgerMachine.LiveCall {
    /// The call as another node needs it to finish the record.
    var snapshot: LiveCallSnapshot {
        let (rangAt, acceptedAt) = rangAndAcceptedAt
        return LiveCallSnapshot(
            callId: callId, caller: caller, callee: callee, media: media, roomId: roomId, startedAt: startedAt,
            rangAt: rangAt, acceptedAt: acceptedAt, devices: devices, lastHeard: acceptedAt ?? lastHeard)
    }

    var isAccepted: Bool {
        if case .accepted = phase { return true }
        return false
    }

    /// When the callee's first device rang, and when the callee accepted (nil while it rings).
    var rangAndAcceptedAt: (rangAt: Int64?, acceptedAt: Int64?) {
        switch phase {
        case .ringing(let rangAt): (rangAt, nil)
        case .accepted(let rangAt, let acceptedAt, _): (rangAt, acceptedAt)
        }
    }

    /// A message of the call came from `session`: it takes part, and the call is alive.
    mutating func heard(from session: SessionID, user: String, deviceId: String?, now: Int64) {
        sessions.insert(session)
        goneSince = nil
        if !session.isRemote { awaySince = nil }
        lastHeard = now
        let name = session.description
        if let index = devices.firstIndex(where: { $0.session == name }) {
            if let deviceId, devices[index].deviceId == nil { devices[index].deviceId = deviceId }
        } else {
            let ending = user == caller ? "called" : "rang"
            devices.append(CallDevice(userId: user, session: name, deviceId: deviceId, ending: ending))
        }
    }

    /// The call message reached `session` of the callee.
    mutating func rang(_ session: SessionID, user: String) {
        sessions.insert(session)
        goneSince = nil
        if !session.isRemote { awaySince = nil }
        let name = session.description
        guard !devices.contains(where: { $0.session == name }) else { return }
        devices.append(CallDevice(userId: user, session: name, deviceId: nil, ending: "rang"))
    }

    mutating func setEnding(of session: SessionID, _ ending: String) {
        let name = session.description
        guard let index = devices.firstIndex(where: { $0.session == name }) else { return }
        devices[index].ending = ending
    }

    mutating func setEndingOfOthers(user: String, except session: SessionID, _ ending: String) {
        let name = session.description
        for index in devices.indices
        where devices[index].userId == user && devices[index].session != name && devices[index].ending == "rang" {
            devices[index].ending = ending
        }
    }

    func event(_ kind: CallEvent.Kind, at now: Int64, outcome: CallOutcome? = nil) -> CallEvent {
        CallEvent(kind: kind, callId: callId, caller: caller, callee: callee, at: now, outcome: outcome)
    }
}
