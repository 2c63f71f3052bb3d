import CallAPI

// Legacy endpoints in the chaos mix: deployed-client stand-ins that call ours and are called by ours.
// Invariants: no message of ours ever reaches one twice or carries an action it does not know; against
// them, every call still ends on our side within the bound (the runner's ring-bound and settle checks),
// and a call ours says is connected has the legacy endpoint connected with it in the same channel.
extension ChaosScenario {
    static func makeLegacyEndpoints(
        _ configuration: ChaosConfiguration, network: InMemorySignalNetwork, world: SimulatedRTCWorld, after last: UInt
    ) -> [LegacyCallEndpoint] {
        let flavours = configuration.legacyFlavours
        guard configuration.legacyEndpoints > 0, !flavours.isEmpty else { return [] }
        return (0..<configuration.legacyEndpoints).map { index in
            let user = last + 1 + UInt(index)
            let calls = Locked(0)
            return LegacyCallEndpoint(
                flavours[index % flavours.count], userId: user, network: network, world: world,
                ringTimeoutMillis: Int64(clamping: configuration.ringTimeoutMillis),
                makeCallId: {
                    let n = calls.withLock { count -> Int in
                        count += 1
                        return count
                    }
                    return "legacy-\(user)-\(n)"
                })
        }
    }

    /// Whom `user` (ours) may call: the other endpoints, ours and legacy. (Forgeries claim only ours as
    /// senders: a forged message with the reliability mark would teach ours that a legacy user acknowledges.)
    func callTargets(than user: UInt) -> [UInt] {
        (Array(Set(endpoints.map(\.userId))).sorted() + legacy.map(\.userId)).filter { $0 != user }
    }

    /// One action in four is a legacy endpoint's when there are any. Returns whether one acted.
    func actAsLegacy() -> Bool {
        guard !legacy.isEmpty, roll({ $0.chance(0.25) }) else { return false }
        let endpoint = roll { legacy.randomElement(using: &$0)! }
        let choice = roll { Double.random(in: 0..<1, using: &$0) }
        let name = "legacy \(endpoint.flavour) \(endpoint.userId)"
        switch endpoint.state {
        case .prepared:
            guard choice < 0.6 else { break }
            let target = roll { endpoints.randomElement(using: &$0)!.userId }
            let type: CallType = roll { $0.chance(0.3) } ? .audio : .video
            log("\(name): call \(target) \(type)")
            endpoint.call(target, type: type)
        case .calling(let call) where call.isCaller:
            guard choice < 0.4 else { break }
            log("\(name): cancel")
            endpoint.cancel()
        case .calling:
            if choice < 0.5 {
                log("\(name): accept")
                endpoint.accept()
            } else if choice < 0.8 {
                log("\(name): reject")
                endpoint.reject(reason: "no")
            }
        case .connecting, .connected:
            guard choice < 0.4 else { break }
            log("\(name): hangup")
            endpoint.hangup()
        }
        return true
    }

    /// Ours (`me`) is connected in `room` with a legacy endpoint: it must be connected with us, in that room.
    func checkConnected(_ me: UInt, room: String?, with other: LegacyCallEndpoint) {
        let channel = world.engine(userId: other.userId).channel
        guard case .connected(let call) = other.state, call.peer == me, channel == room else {
            violation(
                "user \(me) connected in room \(room ?? "?") with legacy user \(other.userId), which is "
                    + "\(other.state.type) with \(other.state.call?.peer.description ?? "nobody") in \(channel ?? "no room")"
            )
            return
        }
    }

    func checkLegacyInvariants() {
        guard !legacy.isEmpty else { return }
        let legacyIds = Set(legacy.map(\.userId))
        var seen = Set<String>()
        for envelope in network.sentMessages where legacyIds.contains(envelope.to) && !legacyIds.contains(envelope.from)
        {
            if !seen.insert(envelope.text).inserted {
                violation("user \(envelope.from) sent legacy user \(envelope.to) a message twice: \(envelope.text)")
            }
        }
        for endpoint in legacy where !endpoint.unknownActionsReceived.isEmpty {
            violation(
                "legacy user \(endpoint.userId) received actions it does not know: \(endpoint.unknownActionsReceived)")
        }
    }
}

extension ChaosScenario {
    /// How many times a legacy endpoint reached connected.
    var legacyCallsConnected: Int {
        legacy.map { $0.stateChanges.filter { $0.state == .connected }.count }.reduce(0, +)
    }
}
