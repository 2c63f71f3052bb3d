import CallAPI

/// Drives two or three CallAPI endpoints through random user actions over a faulty network, on a manual
/// clock, then lets the network settle and checks that no call got stuck or split.
///
/// Invariants checked:
/// - after settling, both sides agree: connected in the same call (same callId and room), or both out;
/// - no endpoint stays in calling or connecting past its ring timeout (checked all along), nor in any call
///   state after settling unless its peer is connected in the same call;
/// - every RTC channel joined is left when the call ends (engines released, no one left in a channel);
/// - every completion handler runs exactly once; no callback follows deinitialize's completion;
/// - no forged or stale message changes any state;
/// - with users on several devices: at most one device of a user is in a given call once it settles (two that
///   accepted at once may overlap until the caller's notice arrives, never past the ring timeout); every other
///   device leaves calling within the ring timeout of the call being answered; no device's message ends a
///   call answered on another.
///
/// A run is a pure function of its seed: the same seed replays the same scenario.
public struct ChaosRunner: Sendable {
    public var configuration: ChaosConfiguration

    public init(configuration: ChaosConfiguration = ChaosConfiguration()) {
        self.configuration = configuration
    }

    public func run(seed: UInt64) -> ChaosOutcome {
        ChaosScenario(configuration: configuration, seed: seed).run()
    }
}

/// One scenario's world and bookkeeping.
final class ChaosScenario: Sendable {
    let configuration: ChaosConfiguration
    let seed: UInt64
    let clock = ManualClock()
    let network: InMemorySignalNetwork
    let world: SimulatedRTCWorld
    let endpoints: [ChaosEndpoint]
    /// Deployed-client stand-ins (ChaosScenario+Legacy.swift), users after ours.
    let legacy: [LegacyCallEndpoint]
    let random: Locked<SeededRandom>
    let trace = Locked<[String]>([])
    let violations = Locked<[String]>([])
    let completions = Locked<[Int: (label: String, count: Int, endpoint: String, generation: Int)]>([:])
    let generations = Locked<[String: Int]>([:])
    let faultsOn = Locked(true)
    /// When a device of the callee user was first seen connected in each call (for the answered-elsewhere bound).
    let answeredAt = Locked<[String: Int64]>([:])
    let paths = Locked(CutPaths())

    init(configuration: ChaosConfiguration, seed: UInt64) {
        self.configuration = configuration
        self.seed = seed
        let network = InMemorySignalNetwork(clock: clock, latencyMillis: configuration.latencyMillis)
        let world = SimulatedRTCWorld(
            clock: clock, timing: .init(joinLatencyMillis: 30, firstFrameLatencyMillis: 60, frameRate: 0))
        var rng = SeededRandom(seed: seed)
        var endpoints: [ChaosEndpoint] = []
        for user in 1...UInt(max(2, configuration.endpoints)) {
            // Drawn only with several devices allowed, so that single-device seeds replay as before.
            let devices =
                configuration.maxDevicesPerUser > 1
                ? Int.random(in: 1...configuration.maxDevicesPerUser, using: &rng) : 1
            for device in 0..<devices {
                endpoints.append(
                    ChaosEndpoint(
                        userId: user, device: device,
                        signal: device == 0 ? network.client(userId: user) : network.addDevice(userId: user),
                        engine: world.engine(userId: user, device: device)))
            }
        }
        self.network = network
        self.world = world
        self.endpoints = endpoints
        random = Locked(rng)
        legacy = Self.makeLegacyEndpoints(
            configuration, network: network, world: world, after: UInt(max(2, configuration.endpoints)))
    }

    func roll<T>(_ body: (inout SeededRandom) -> T) -> T { random.withLock { body(&$0) } }
    func log(_ line: String) { trace.withLock { $0.append("t=\(clock.nowMillis() - start) \(line)") } }
    func violation(_ what: String) { violations.withLock { $0.append(what) } }
    private var start: Int64 { 1_767_225_600_000 }

    func run() -> ChaosOutcome {
        installFaults()
        for endpoint in endpoints { boot(endpoint) }
        for _ in 0..<configuration.actions {
            clock.advance(byMillis: roll { Int64.random(in: 0...configuration.maxPauseMillis, using: &$0) })
            checkRingBound()
            checkDevices()
            act()
        }
        settle()
        checkInvariants()
        checkLegacyInvariants()
        let sent = network.sentMessages
        if !violations.withLock(\.isEmpty) {
            // The deployed-client stand-ins report to no listener of ours: their states, in order, once.
            for endpoint in legacy {
                let states = endpoint.stateChanges.map(\.description).joined(separator: ", ")
                let name = "legacy \(endpoint.flavour) \(endpoint.userId)"
                log("\(name) went through: \(states.isEmpty ? "nothing" : states)")
            }
            for envelope in sent.suffix(400) { describe(envelope) }
        }
        return ChaosOutcome(
            seed: seed, violations: violations.withLock { $0 }, trace: trace.withLock { $0 }, messagesSent: sent.count,
            callsConnected: endpoints.compactMap(\.listener).map(\.current.connections).reduce(0, +),
            legacyCallsConnected: legacyCallsConnected)
    }

    // MARK: - Faults

    private func installFaults() {
        let config = configuration
        network.setFaultPolicy { [weak self] envelope in
            guard let self, faultsOn.withLock({ $0 }) else { return nil }
            return roll { rng -> InMemorySignalNetwork.Fault? in
                if rng.chance(config.loss) { return .drop }
                if rng.chance(config.duplication) { return .duplicate }
                if rng.chance(config.reorder) {
                    return .delay(Int64.random(in: 1...max(1, config.maxReorderDelayMillis), using: &rng))
                }
                return nil
            }
        }
    }

    // MARK: - Endpoints

    private func boot(_ endpoint: ChaosEndpoint) {
        let generation = generations.withLock { g -> Int in
            g[endpoint.name, default: 0] += 1
            return g[endpoint.name]!
        }
        let api = CallApiImpl(deviceId: "\(endpoint.name)#\(generation)")
        let listener = ChaosListener(
            label: "\(endpoint.name)#\(generation)", clock: clock, violations: violations,
            log: { [weak self] in self?.log($0) })
        api.addListener(listener: listener)
        endpoint.start(api: api, listener: listener)
        network.setOnline(true, userId: endpoint.userId)
        initialize(endpoint)
    }

    private func initialize(_ endpoint: ChaosEndpoint) {
        guard let api = endpoint.api else { return }
        if let closed = endpoint.listener, closed.current.closed {
            // The closed listener stays registered until now, to catch callbacks after deinitialize.
            let fresh = ChaosListener(
                label: "\(endpoint.name) re-initialized", clock: clock, violations: violations,
                log: { [weak self] in self?.log($0) })
            api.removeListener(listener: closed)
            api.addListener(listener: fresh)
            endpoint.start(api: api, listener: fresh)
        }
        api.initialize(
            config: CallConfig(
                appId: "chaos", userId: endpoint.userId, rtcEngine: endpoint.engine,
                signalClient: endpoint.signal, clock: clock,
                reliability: configuration.reliability, makeCallId: { [weak self] in self?.nextCallId() ?? "" }))
        endpoint.setInitialized(true)
        prepare(endpoint)
    }

    private func prepare(_ endpoint: ChaosEndpoint) {
        let config = PrepareConfig(
            roomId: "room-\(endpoint.userId)-\(endpoint.device)-\(clock.nowMillis() - start)", rtcToken: "t",
            localView: TestCanvas(), remoteView: TestCanvas(), callTimeoutMillisecond: configuration.ringTimeoutMillis)
        request(endpoint, "prepareForCall") { $0.prepareForCall(prepareConfig: config, completion: $1) }
    }

    /// Runs a request, checking later that its completion ran exactly once.
    private func request(
        _ endpoint: ChaosEndpoint, _ label: String,
        _ body: (CallApiImpl, @escaping @Sendable ((any Error)?) -> Void) -> Void
    ) {
        guard let api = endpoint.api else { return }
        log("\(endpoint.name): \(label) [\(api.state)]")
        let generation = generations.withLock { $0[endpoint.name] ?? 0 }
        let id = completions.withLock { entries -> Int in
            let id = entries.count
            entries[id] = (label: "\(endpoint.name): \(label)", count: 0, endpoint: endpoint.name, generation)
            return id
        }
        body(api) { [completions] _ in completions.withLock { $0[id]?.count += 1 } }
    }

    /// Call ids from the seed, so that glare (lower callId wins) replays too.
    private func nextCallId() -> String {
        roll { String($0.next(), radix: 16) }
    }

    private func others(than user: UInt) -> [UInt] {
        Array(Set(endpoints.map(\.userId))).sorted().filter { $0 != user }
    }

    private func devices(of user: UInt) -> [ChaosEndpoint] { endpoints.filter { $0.userId == user } }

    // MARK: - Actions

    private func act() {
        if actAsLegacy() { return }
        let endpoint = roll { endpoints.randomElement(using: &$0)! }
        if roll({ $0.chance(configuration.partition) }) {
            let (a, b) = roll { rng in
                (endpoints.randomElement(using: &rng)!.userId, endpoints.randomElement(using: &rng)!.userId)
            }
            if a != b {
                log("partition \(a) | \(b)")
                network.partition(a, b)
                paths.withLock { $0.cut(a, b) }
            }
        } else if roll({ $0.chance(0.15) }) {
            log("heal partitions")
            healPartitions()
        }
        if roll({ $0.chance(configuration.forgery) }) { injectForgery() }
        if endpoint.isCrashed {
            if roll({ $0.chance(0.5) }) {
                log("\(endpoint.name): restarts")
                boot(endpoint)
            }
            return
        }
        if roll({ $0.chance(configuration.crash) }) {
            log("\(endpoint.name): crashes")
            endpoint.crash()
            if devices(of: endpoint.userId).allSatisfy(\.isCrashed) {
                network.setOnline(false, userId: endpoint.userId)
            }
            endpoint.engine.crash()
            return
        }
        guard let api = endpoint.api, let listener = endpoint.listener else { return }
        let snapshot = listener.current
        let peer = snapshot.peer ?? roll { others(than: endpoint.userId).randomElement(using: &$0)! }
        let choice = roll { Double.random(in: 0..<1, using: &$0) }
        if choice < 0.05 {
            request(endpoint, "deinitialize") { api, done in
                api.deinitialize {
                    listener.close()
                    done(nil)
                }
            }
            endpoint.setInitialized(false)
            return
        }
        if !endpoint.isInitialized {
            log("\(endpoint.name): initialize")
            initialize(endpoint)
            return
        }
        switch (api.state, snapshot.isCaller) {
        case (.prepared, _), (.failed, _), (.idle, _):
            if choice < 0.7 {
                let target = roll { callTargets(than: endpoint.userId).randomElement(using: &$0)! }
                let type: CallType = roll { $0.chance(0.5) } ? .video : .audio
                request(endpoint, "call \(target) \(type)") {
                    $0.call(remoteUserId: target, callType: type, callExtension: [:], completion: $1)
                }
            } else if choice < 0.8 {
                prepare(endpoint)
            } else {
                invalidAction(endpoint, peer: peer)
            }
        case (.calling, true):
            if choice < 0.35 {
                request(endpoint, "cancelCall") { $0.cancelCall(completion: $1) }
            } else if choice < 0.45 {
                request(endpoint, "hangup \(peer)") { $0.hangup(remoteUserId: peer, reason: nil, completion: $1) }
            } else if choice < 0.55 {
                invalidAction(endpoint, peer: peer)
            }
        case (.calling, false):
            if choice < 0.55 {
                request(endpoint, "accept \(peer)") { $0.accept(remoteUserId: peer, completion: $1) }
            } else if choice < 0.8 {
                request(endpoint, "reject \(peer)") { $0.reject(remoteUserId: peer, reason: "no", completion: $1) }
            } else if choice < 0.85 {
                invalidAction(endpoint, peer: peer)
            }
        case (.connecting, _), (.connected, _):
            if choice < 0.45 {
                request(endpoint, "hangup \(peer)") { $0.hangup(remoteUserId: peer, reason: nil, completion: $1) }
            } else if choice < 0.55 {
                invalidAction(endpoint, peer: peer)
            }
        }
    }

    /// A request the current state must refuse without changing anything.
    private func invalidAction(_ endpoint: ChaosEndpoint, peer: UInt) {
        guard let api = endpoint.api else { return }
        let before = (api.state, api.getCallId())
        let pick = roll { Int.random(in: 0..<4, using: &$0) }
        switch (api.state, pick) {
        case (.prepared, _), (.failed, _), (.idle, _):
            request(endpoint, "accept \(peer) (invalid)") { $0.accept(remoteUserId: peer, completion: $1) }
        case (.calling, 0), (.connecting, 0), (.connected, 0):
            prepare(endpoint)
        case (.calling, 1), (.connecting, 1), (.connected, 1):
            request(endpoint, "call \(peer) (invalid)") { $0.call(remoteUserId: peer, completion: $1) }
        case (.connecting, _), (.connected, _):
            request(endpoint, "cancelCall (invalid)") { $0.cancelCall(completion: $1) }
        default:
            request(endpoint, "hangup 4242 (invalid)") { $0.hangup(remoteUserId: 4242, reason: nil, completion: $1) }
        }
        if (api.state, api.getCallId()) != before {
            violation("\(endpoint.name): a refused request changed \(before) to \((api.state, api.getCallId()))")
        }
    }

    // MARK: - Forged and stale messages

    private func injectForgery() {
        let victim = roll { endpoints.randomElement(using: &$0)! }
        guard let api = victim.api, let listener = victim.listener else { return }
        // Every device of the victim's user receives the message, in whatever state each is: none may change.
        let devices = endpoints.filter { $0.userId == victim.userId }
        func states() -> [String] {
            devices.map { device in "\(device.name): " + (device.api.map { "\($0.state) \($0.getCallId())" } ?? "-") }
        }
        let before = states()
        let now = clock.nowMillis()
        let text: String
        let from: UInt
        if api.state.isInCall, let peer = listener.current.peer {
            // Someone else claims to be the peer and hangs up (or cancels, or rejects) the victim's call.
            from = others(than: victim.userId).first { $0 != peer } ?? 99
            let action = roll { [MessageAction.hangup, .cancelCall, .reject, .accept].randomElement(using: &$0)! }
            text = CallMessage(
                action: action, timestamp: now, messageId: 90_000, fromUserId: peer, callId: api.getCallId(),
                reliable: true
            ).encoded()
            log("forged \(action) to user \(victim.userId) from \(from) claiming \(peer)")
            network.inject(text: text, from: from, to: victim.userId)
        } else if api.state == .prepared {
            // A call message that spent two minutes in a queue.
            from = roll { others(than: victim.userId).randomElement(using: &$0)! }
            let old = now - Int64(configuration.ringTimeoutMillis) - 120_000
            text = CallMessage(
                action: .videoCall, timestamp: old, messageId: 90_001, fromUserId: from, callId: "stale-\(now)",
                remoteUserId: victim.userId, fromRoomId: "stale-room", reliable: true
            ).encoded()
            log("stale call to user \(victim.userId) from \(from)")
            network.inject(text: text, from: from, to: victim.userId, receivedAtMillis: old)
        } else {
            return
        }
        let after = states()
        for (earlier, later) in zip(before, after) where earlier != later {
            violation("a forged or stale message to user \(victim.userId) from \(from) changed \(earlier) to \(later)")
        }
    }

    // MARK: - Checks

    /// The ring timer bounds calling and connecting together. A recall restarts it without a notification,
    /// so allow twice the timeout.
    private func checkRingBound() {
        let now = clock.nowMillis()
        for endpoint in endpoints {
            guard let api = endpoint.api, let listener = endpoint.listener,
                api.state == .calling || api.state == .connecting
            else { continue }
            let since = now - listener.current.ringingSince
            if since > 2 * Int64(configuration.ringTimeoutMillis) {
                violation("\(endpoint.name) in \(api.state) for \(since) ms, past the ring timeout")
            }
        }
    }

    private func healPartitions() {
        network.heal()
        let now = clock.nowMillis()
        paths.withLock { $0.restoreAll(now: now) }
    }

    /// Several devices of one user: once a device is connected in a call, every other device of its user leaves
    /// that call (stops ringing, or drops its crossing accept) within the ring timeout, counted from when the
    /// peer user can be reached. While the path between the two users is cut, the caller's notice cannot arrive,
    /// and two devices that both accepted stay in the call until the caller ends it (docs/multi-device.md).
    private func checkDevices() {
        let now = clock.nowMillis()
        var answered = answeredAt.withLock { $0 }
        let paths = paths.withLock { $0 }
        for endpoint in endpoints {
            guard let api = endpoint.api, api.state == .connected, let snapshot = endpoint.listener?.current,
                let callId = snapshot.callId
            else { continue }
            if answered[callId] == nil { answered[callId] = now }
            var start = answered[callId, default: now]
            if let peer = snapshot.peer {
                if paths.isCut(endpoint.userId, peer) { continue }
                start = max(start, paths.restoredAt(endpoint.userId, peer) ?? start)
            }
            let since = now - start
            guard since > Int64(configuration.ringTimeoutMillis) else { continue }
            for sibling in devices(of: endpoint.userId) where sibling !== endpoint {
                guard let other = sibling.api, other.state.isInCall, other.getCallId() == callId else { continue }
                violation(
                    "\(sibling.name) still \(other.state) in call \(callId) \(since) ms after \(endpoint.name) connected in it"
                )
            }
        }
        answeredAt.withLock { $0 = answered }
    }

    private func settle() {
        log("settle: faults off, partitions healed")
        faultsOn.withLock { $0 = false }
        healPartitions()
        network.releaseHeld()
        clock.advance(byMillis: configuration.settleMillis)
    }

    private func checkInvariants() {
        for endpoint in endpoints {
            guard let api = endpoint.api, let listener = endpoint.listener else { continue }
            let me = endpoint.name
            let engine = endpoint.engine
            let state = api.state
            switch state {
            case .calling, .connecting:
                violation("\(me) still \(state) after settling")
            case .connected:
                let snapshot = listener.current
                if let peer = snapshot.peer, let other = legacy.first(where: { $0.userId == peer }) {
                    checkConnected(endpoint.userId, room: snapshot.room, with: other)
                    continue
                }
                guard let peer = snapshot.peer else {
                    violation("\(me) connected with a peer that is gone")
                    continue
                }
                // Exactly one device of the peer user is connected in this call, in the same room; and no other
                // device of this user is in it.
                let peers = devices(of: peer).filter {
                    $0.api?.state == .connected && $0.api?.getCallId() == api.getCallId()
                        && $0.listener?.current.room == snapshot.room
                }
                if peers.count != 1 {
                    let seen = devices(of: peer).map {
                        "\($0.name) \($0.api?.state ?? .idle) \($0.api?.getCallId() ?? "")"
                    }
                    violation(
                        "\(me) connected in call \(api.getCallId()) room \(snapshot.room ?? "?"), but "
                            + "\(peers.count) devices of user \(peer) are: \(seen.joined(separator: ", "))")
                }
                let siblings = devices(of: endpoint.userId).filter {
                    $0 !== endpoint && $0.api?.state.isInCall == true && $0.api?.getCallId() == api.getCallId()
                }
                for sibling in siblings { violation("\(me) and \(sibling.name) are both in call \(api.getCallId())") }
                if engine.channel != snapshot.room {
                    violation(
                        "\(me) connected in \(snapshot.room ?? "?") but its engine is in \(engine.channel ?? "none")"
                    )
                }
            case .idle, .prepared, .failed:
                if !engine.isReleased {
                    violation("\(me) is \(state) but its RTC engine still holds a channel, preview or canvas")
                }
            }
        }
        for channel in world.occupiedChannels {
            // A legacy endpoint left in a channel is its own (deployed clients') fault, checked apart.
            for member in world.members(of: channel) where !legacy.contains(where: { $0.userId == member }) {
                let inCall = devices(of: member).contains {
                    $0.api?.state == .connected && $0.listener?.current.room == channel
                }
                if !inCall {
                    violation("user \(member) is still in RTC channel \(channel) outside a call")
                }
            }
        }
        let generationsNow = generations.withLock { $0 }
        for (_, entry) in completions.withLock({ $0 }) where entry.count != 1 {
            // A crashed process's pending completions die with it.
            let crashedSince = generationsNow[entry.endpoint] != entry.generation
            if !(crashedSince && entry.count == 0) {
                violation("\(entry.label): completion ran \(entry.count) times")
            }
        }
    }

    private func describe(_ envelope: InMemorySignalNetwork.Envelope) {
        guard let (message, _) = try? CallMessage.decode(envelope.text) else { return }
        let extra = message.ackMessageId.map { " ack \($0) inCall \(message.inCall ?? false)" } ?? ""
        trace.withLock {
            $0.append(
                "msg t=\(envelope.sentAtMillis - start) \(envelope.from)→\(envelope.to) \(message.action) "
                    + "#\(message.messageId.map(String.init) ?? "-") call \(message.callId.prefix(8))\(extra)")
        }
    }
}
