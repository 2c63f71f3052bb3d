import CallAPISignalProtocol

/// The match queue and the calls the server places, as a pure state machine (docs/match.md).
///
/// Users wait with tags; a user who enters is paired at once with the user who has waited longest among those
/// sharing one of its tags, so no two waiting users ever share a tag. The one who waited longer places the call.
/// A placed call (matched, or asked for by the business server) is pending until its caller's call message passes
/// through the hub; a window bounds the wait. Ids come from a counter behind a prefix the shell makes random, so
/// they are unique across restarts and predictable in tests.
package struct MatchMachine: Sendable {
    package let limits: MatchLimits
    private let idPrefix: String
    /// Waiting users by user id.
    private(set) var waiting: [String: MatchEntry] = [:]
    /// Waiting users by tag, longest waiting first (an index over `waiting`).
    private var waitingByTag: [String: [String]] = [:]
    /// Placed calls not seen placed yet, by call id.
    private(set) var placements: [String: PendingPlacement] = [:]
    /// How many of `placements` each caller has (so the hub checks a user's sends without parsing them).
    private var placementsByCaller: [String: Int] = [:]
    /// Indexes by session, so that a session closing is not a scan of the queue.
    private var waitingBySession: [SessionID: String] = [:]
    private var placementsBySession: [SessionID: Set<String>] = [:]
    /// Outlives every entry: places in line and ids are never reused.
    private var nextArrival: UInt64 = 1
    private var nextMatch: UInt64 = 1

    package init(limits: MatchLimits, idPrefix: String) {
        self.limits = limits
        self.idPrefix = idPrefix
    }

    // MARK: - Queries

    /// Users waiting now.
    package var waitingCount: Int { waiting.count }

    /// The tags `user` waits with, or `nil` when it is not waiting.
    package func tags(of user: String) -> [String]? { waiting[user]?.tags }

    /// Whether a call placed by the server waits for `user` to send its call message.
    package func awaitsCall(from user: String) -> Bool { placementsByCaller[user] != nil }

    /// The pending placed call `callId`, if any.
    func placement(_ callId: String) -> PendingPlacement? { placements[callId] }

    // MARK: - Inputs

    /// Applies `input` at `now` (ms since 1970) and returns what to do, in order.
    package mutating func handle(_ input: MatchInput, now: Int64) -> [MatchAction] {
        var actions: [MatchAction] = []
        handle(input, now: now, into: &actions)
        return actions
    }

    /// Applies `input` at `now`, appending what to do to `actions` in order.
    package mutating func handle(
        _ input: MatchInput, now: Int64, into actions: inout [MatchAction]
    ) {
        func send(_ frame: ServerFrame, to session: SessionID) { actions.append(.send(session, frame)) }
        func append(_ action: MatchAction) { actions.append(action) }
        switch input {
        case .enter(let session, let user, let enter):
            self.enter(enter, user: user, session: session, now: now, send, append)
        case .leave(let session, let user, let request):
            removeWaiting(user)
            send(.matchQueue(.init(id: request.id, waiting: false, tags: [])), to: session)
        case .place(let order, let callId, let callerSession):
            let placement = PendingPlacement(
                callId: callId, caller: order.caller, callerSession: callerSession, callee: order.callee,
                media: order.media, origin: .businessServer, deadline: now + limits.placeWindowMillis)
            add(placement, send, append)
        case .placeMatched(let order, let callId, let matchId, let tag, let callerSession):
            let placement = PendingPlacement(
                callId: callId, caller: order.caller, callerSession: callerSession, callee: order.callee,
                media: order.media, origin: .match(matchId: matchId, tag: tag),
                deadline: now + limits.placeWindowMillis)
            add(placement, send, append)
        case .callSent(let from, let to, let callId):
            if let placement = placements[callId], placement.caller == from, placement.callee == to {
                removePlacement(callId)
            }
        case .sessionClosed(let session):
            sessionClosed(session, append)
        case .tick:
            tick(now: now, append)
        }
    }

    /// Where a handler sends a frame and appends its other actions, in order.
    private typealias Send = (ServerFrame, SessionID) -> Void
    private typealias Append = (MatchAction) -> Void

    // MARK: - Queue

    private mutating func enter(
        _ enter: ClientFrame.MatchEnter, user: String, session: SessionID, now: Int64, _ send: Send,
        _ append: Append
    ) {
        if let problem = MatchProtocol.tagsProblem(enter.tags) {
            return send(.error(.init(id: enter.id, code: .invalidFrame, message: problem)), session)
        }
        // Entering again (new tags, or another device) keeps the user's place in line.
        let arrival = waiting[user]?.arrival
        removeWaiting(user)
        guard arrival != nil || waiting.count < limits.maxWaiting else {
            return send(
                .error(
                    .init(
                        id: enter.id, code: .matchQueueFull,
                        message: "\(waiting.count) users are already waiting to be matched, the most allowed")),
                session)
        }
        let entry = MatchEntry(session: session, tags: enter.tags, arrival: arrival ?? takeArrival())
        let answer = ServerFrame.matchQueue(.init(id: enter.id, waiting: true, tags: enter.tags))
        guard let (peer, tag) = earliestPeer(sharing: entry.tags) else {
            addWaiting(user, entry)
            return send(answer, session)
        }
        // Only a pair is formed here: the peer leaves the line, the newcomer never joins it.
        guard let other = waiting[peer] else { return send(answer, session) }
        removeWaiting(peer)
        let (caller, callee) =
            other.arrival < entry.arrival
            ? ((user: peer, entry: other), (user: user, entry: entry))
            : ((user: user, entry: entry), (user: peer, entry: other))
        let (matchId, callId) = takeMatchIds()
        let placement = PendingPlacement(
            callId: callId, caller: caller.user, callerSession: caller.entry.session, callee: callee.user,
            media: .video, origin: .match(matchId: matchId, tag: tag), deadline: now + limits.placeWindowMillis)
        send(answer, session)
        send(
            .matched(.init(matchId: matchId, peer: callee.user, tag: tag, callId: callId, role: .caller)),
            caller.entry.session)
        send(
            .matched(.init(matchId: matchId, peer: caller.user, tag: tag, callId: callId, role: .callee)),
            callee.entry.session)
        add(placement, send, append)
    }

    /// The user who has waited longest among those sharing one of `tags`, and the shared tag (the first of `tags`
    /// on which that user waits).
    private func earliestPeer(sharing tags: [String]) -> (user: String, tag: String)? {
        var best: (user: String, tag: String, arrival: UInt64)?
        for tag in tags {
            guard let head = waitingByTag[tag]?.first, let arrival = waiting[head]?.arrival else { continue }
            if best == nil || arrival < best!.arrival { best = (head, tag, arrival) }
        }
        return best.map { ($0.user, $0.tag) }
    }

    private mutating func addWaiting(_ user: String, _ entry: MatchEntry) {
        waiting[user] = entry
        waitingBySession[entry.session] = user
        for tag in entry.tags {
            // Arrival order within a tag: a re-entering user may go before users who came after it.
            var line = waitingByTag[tag] ?? []
            let index = line.firstIndex { (waiting[$0]?.arrival ?? 0) > entry.arrival } ?? line.endIndex
            line.insert(user, at: index)
            waitingByTag[tag] = line
        }
    }

    private mutating func removeWaiting(_ user: String) {
        guard let entry = waiting.removeValue(forKey: user) else { return }
        waitingBySession[entry.session] = nil
        for tag in entry.tags {
            var line = waitingByTag[tag] ?? []
            line.removeAll { $0 == user }
            waitingByTag[tag] = line.isEmpty ? nil : line
        }
    }

    // MARK: - Placed calls

    /// Records `placement` (giving up the oldest pending one when there are too many) and tells its caller.
    private mutating func add(_ placement: PendingPlacement, _ send: Send, _ append: Append) {
        if placements.count >= limits.maxPendingPlacements,
            let oldest = placements.values.min(by: { ($0.deadline, $0.callId) < ($1.deadline, $1.callId) })
        {
            removePlacement(oldest.callId)
            append(.callNotPlaced(oldest.notPlaced("placementsFull")))
        }
        placements[placement.callId] = placement
        placementsByCaller[placement.caller, default: 0] += 1
        placementsBySession[placement.callerSession, default: []].insert(placement.callId)
        send(placement.frame, placement.callerSession)
    }

    private mutating func removePlacement(_ callId: String) {
        guard let placement = placements.removeValue(forKey: callId) else { return }
        let left = (placementsByCaller[placement.caller] ?? 1) - 1
        placementsByCaller[placement.caller] = left > 0 ? left : nil
        placementsBySession[placement.callerSession]?.remove(callId)
        if placementsBySession[placement.callerSession]?.isEmpty == true {
            placementsBySession[placement.callerSession] = nil
        }
    }

    private mutating func sessionClosed(_ session: SessionID, _ append: Append) {
        if let user = waitingBySession[session] { removeWaiting(user) }
        for callId in (placementsBySession[session] ?? []).sorted() {
            guard let placement = placements[callId] else { continue }
            removePlacement(callId)
            append(.callNotPlaced(placement.notPlaced("callerGone")))
        }
    }

    private mutating func tick(now: Int64, _ append: Append) {
        for placement in placements.values.sorted(by: { $0.callId < $1.callId }) where now >= placement.deadline {
            removePlacement(placement.callId)
            append(.callNotPlaced(placement.notPlaced("notPlaced")))
        }
    }

    private mutating func takeArrival() -> UInt64 {
        defer { nextArrival += 1 }
        return nextArrival
    }

    /// A new match's id and its call's: `match-<run>-<n>` and `call-<run>-<n>` (also for the cluster's queue, whose
    /// pairs the hub forms from the database's answer).
    package mutating func takeMatchIds() -> (matchId: String, callId: String) {
        defer { nextMatch += 1 }
        return ("match-\(idPrefix)-\(nextMatch)", "call-\(idPrefix)-\(nextMatch)")
    }
}
