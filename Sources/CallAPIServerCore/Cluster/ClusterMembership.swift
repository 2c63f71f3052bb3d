/// This node's membership of a cluster as a pure machine (docs/scale-out.md): it registers with a new epoch, beats,
/// sweeps dead nodes, reads the others' sessions and its mailbox, and registers again once it may have been declared
/// dead. The link performs each action and reports its outcome before the next ``handle(_:now:)``.
///
/// Fencing: a node delivers and forwards only as a ``State/member(_:)``, and its writes name its epoch; a node
/// whose heartbeat was not saved for ``ClusterTimings/deadAfterMillis`` (stopped, cut off from the database) may
/// have been declared dead and its sessions removed, so it registers again (a new epoch) and writes its sessions
/// again before it does anything else.
package struct ClusterMembership: Sendable {
    package enum State: Sendable, Equatable {
        /// Not a member: the next registration is due at `retryAt`.
        case joining(retryAt: Int64)
        /// A member with `epoch`.
        case member(Member)
        /// Left the cluster (shut down).
        case stopped
    }

    package struct Member: Sendable, Equatable {
        package var epoch: Int64
        /// When its heartbeat was last saved (or it registered).
        package var beatSavedAt: Int64
        package var nextBeatAt: Int64
        package var nextPresenceAt: Int64
        package var nextPollAt: Int64
    }

    package enum Input: Sendable, Equatable {
        /// Time passed.
        case tick
        /// The node registered with `epoch`.
        case registered(epoch: Int64)
        /// The registration failed (the database is unreachable).
        case registerFailed
        /// The heartbeat was saved.
        case beatSaved
        /// The heartbeat found this node's row gone or with another epoch: it was declared dead.
        case beatLost
        /// The heartbeat could not be saved (the database did not answer).
        case beatFailed
        /// A notification says the mailbox has something for this node.
        case woken
        /// A notification says the other nodes' sessions changed.
        case othersChanged
        /// The server is shutting down.
        case stop
    }

    package enum Action: Sendable, Equatable {
        /// Register (again) with a new epoch, handing this node's old mailbox rows on.
        case register
        /// Write a presence row for every session on this node, with `epoch` (after registering).
        case republish(epoch: Int64)
        /// Save the heartbeat, if the row still has `epoch`.
        case beat(epoch: Int64)
        /// Declare dead the nodes whose heartbeat is older than the limit; delete expired mailbox rows.
        case sweep
        /// Read the other nodes' sessions.
        case readPresence
        /// Read this node's mailbox (and the messages left for its users by dead nodes).
        case poll(epoch: Int64)
        /// Delete this node's rows: a node that stops leaves at once instead of being found dead.
        case leave(epoch: Int64)
    }

    package let timings: ClusterTimings
    package private(set) var state: State

    package init(timings: ClusterTimings = ClusterTimings()) {
        self.timings = timings
        state = .joining(retryAt: .min)
    }

    /// The epoch this node may deliver and forward with: only as a member.
    package var epoch: Int64? {
        if case .member(let member) = state { member.epoch } else { nil }
    }

    /// When the next tick has something to do.
    package var nextDue: Int64? {
        switch state {
        case .joining(let retryAt): retryAt
        case .member(let member):
            min(
                member.nextBeatAt, member.nextPresenceAt, member.nextPollAt,
                member.beatSavedAt + timings.deadAfterMillis)
        case .stopped: nil
        }
    }

    package mutating func handle(_ input: Input, now: Int64) -> [Action] {
        switch (state, input) {
        case (.stopped, _):
            return []
        case (.member(let member), .stop):
            state = .stopped
            return [.leave(epoch: member.epoch)]
        case (_, .stop):
            state = .stopped
            return []
        case (.joining(let retryAt), .tick):
            guard now >= retryAt else { return [] }
            // One registration at a time: the next is due only if this one fails.
            state = .joining(retryAt: .max)
            return [.register]
        case (.joining, .registered(let epoch)):
            state = .member(
                Member(
                    epoch: epoch, beatSavedAt: now, nextBeatAt: now + timings.heartbeatMillis,
                    nextPresenceAt: now + timings.presenceMillis, nextPollAt: now + timings.pollMillis))
            return [.republish(epoch: epoch), .readPresence, .poll(epoch: epoch)]
        case (.joining, .registerFailed):
            state = .joining(retryAt: now + timings.retryMillis)
            return []
        case (.joining, _):
            return []
        case (.member, .registered), (.member, .registerFailed):
            return []  // not asked for
        case (.member(var member), .tick):
            if now - member.beatSavedAt >= timings.deadAfterMillis {
                return rejoin()
            }
            var actions: [Action] = []
            if now >= member.nextBeatAt {
                member.nextBeatAt = now + timings.heartbeatMillis
                actions += [.beat(epoch: member.epoch), .sweep]
            }
            if now >= member.nextPresenceAt {
                member.nextPresenceAt = now + timings.presenceMillis
                actions.append(.readPresence)
            }
            if now >= member.nextPollAt {
                member.nextPollAt = now + timings.pollMillis
                actions.append(.poll(epoch: member.epoch))
            }
            state = .member(member)
            return actions
        case (.member(var member), .beatSaved):
            member.beatSavedAt = now
            state = .member(member)
            return []
        case (.member, .beatLost):
            return rejoin()
        case (.member, .beatFailed):
            return []  // the next tick finds out whether it has been too long
        case (.member(var member), .woken):
            member.nextPollAt = now + timings.pollMillis
            state = .member(member)
            return [.poll(epoch: member.epoch)]
        case (.member(var member), .othersChanged):
            member.nextPresenceAt = now + timings.presenceMillis
            state = .member(member)
            return [.readPresence]
        }
    }

    /// Gives up the membership and registers again at once.
    private mutating func rejoin() -> [Action] {
        state = .joining(retryAt: .max)
        return [.register]
    }
}
