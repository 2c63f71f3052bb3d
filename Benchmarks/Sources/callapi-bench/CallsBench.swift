import CallAPI
import CallAPITesting

/// Full call flows (call → ring → accept → connected → hangup) between pairs of ``CallApiImpl`` whose signaling
/// goes through a relay (our server, or `--peer` Mosquitto or Synapse) and whose media plane is the simulated world with zero latencies.
///
/// Each pair runs calls back to back (a closed loop), so the rate measured is what the whole system sustains.
struct CallsBench {
    struct Settings: Sendable {
        var pairs = 100
        var seconds = 5.0
        /// A call that does not finish in this time counts as failed (it is the CallAPI ring timeout).
        var callTimeoutMillis: UInt64 = 10_000
        /// The relay the signaling goes through: our server (default), Mosquitto or Synapse.
        var peer = BenchPeerSettings()
    }

    struct Report: Codable, Sendable {
        var bench = "calls"
        var peer = "ours"
        /// How tables name the peer.
        var peerTitle = "our server"
        var pairs: Int
        var seconds: Double
        var completed: Int
        var failed: Int
        var callsPerSecond: Double
        /// call() → the callee is ringing (state `calling`).
        var callToRinging: LatencySummary
        /// accept() → both sides `connected`.
        var acceptToConnected: LatencySummary
        /// call() → both sides `connected` (the callee accepts as soon as it rings).
        var setup: LatencySummary
        /// hangup() → both sides `prepared`.
        var hangup: LatencySummary
    }

    let settings: Settings

    func run(log: @Sendable (String) -> Void = { _ in }) async throws -> Report {
        let peer = try await settings.peer.start(orderedSends: true)
        let world = SimulatedRTCWorld(clock: SystemCallClock())
        var endpoints: [(caller: CallEndpoint, callee: CallEndpoint)] = []
        log("logging in \(settings.pairs * 2) endpoints to \(peer.title)")
        do {
            for index in 0..<settings.pairs {
                let caller = try await CallEndpoint.make(
                    user: UInt(300_000 + index), peer: peer, world: world, timeout: settings.callTimeoutMillis)
                let callee = try await CallEndpoint.make(
                    user: UInt(400_000 + index), peer: peer, world: world, timeout: settings.callTimeoutMillis)
                endpoints.append((caller, callee))
            }
        } catch {
            for pair in endpoints { await pair.caller.close(); await pair.callee.close() }
            await peer.stop()
            throw error
        }
        let recorders = CallRecorders()
        log("calling for \(settings.seconds) s")
        let start = BenchClock.nanos()
        let deadline = start + UInt64(settings.seconds * 1e9)
        let grace = settings.seconds + Double(settings.callTimeoutMillis) / 1000 + 5
        let outcomes = await withTaskGroup(of: (Int, Int)?.self) { group in
            for pair in endpoints {
                group.addTask { await Self.callLoop(pair.caller, pair.callee, until: deadline, recorders: recorders) }
            }
            // A watchdog: a pair stuck past the ring timeout is cancelled, which ends its state streams.
            group.addTask {
                try? await Task.sleep(for: .seconds(grace))
                return nil
            }
            var completed = 0, failed = 0, running = endpoints.count
            for await outcome in group {
                guard let (done, lost) = outcome else {
                    group.cancelAll()
                    continue
                }
                completed += done
                failed += lost
                running -= 1
                if running == 0 { group.cancelAll() }
            }
            return (completed, failed)
        }
        let elapsed = BenchClock.seconds(since: start)
        for pair in endpoints {
            await pair.caller.close()
            await pair.callee.close()
        }
        await peer.stop()
        return Report(
            peer: settings.peer.kind.rawValue, peerTitle: peer.title, pairs: settings.pairs,
            seconds: (elapsed * 1000).rounded() / 1000, completed: outcomes.0,
            failed: outcomes.1, callsPerSecond: (Double(outcomes.0) / elapsed).rounded(),
            callToRinging: recorders.ringing.summary, acceptToConnected: recorders.connected.summary,
            setup: recorders.setup.summary, hangup: recorders.hangup.summary)
    }

    /// Calls until `deadline`; returns (completed, failed). A failed call ends the loop (the pair is then in an
    /// unknown state).
    static func callLoop(
        _ caller: CallEndpoint, _ callee: CallEndpoint, until deadline: UInt64, recorders: CallRecorders
    )
        async -> (Int, Int)
    {
        var callerChanges = caller.api.stateChanges.makeAsyncIterator()
        var calleeChanges = callee.api.stateChanges.makeAsyncIterator()
        var completed = 0
        while BenchClock.nanos() < deadline {
            do {
                let start = BenchClock.nanos()
                try await caller.api.call(remoteUserId: callee.user, callType: .video)
                guard await reach(.calling, &calleeChanges, endings: [.failed, .idle]) else { return (completed, 1) }
                let ringing = BenchClock.nanos()
                recorders.ringing.record(nanos: ringing &- start)
                try await callee.api.accept(remoteUserId: caller.user)
                guard await reach(.connected, &calleeChanges), await reach(.connected, &callerChanges) else {
                    return (completed, 1)
                }
                let connected = BenchClock.nanos()
                recorders.connected.record(nanos: connected &- ringing)
                recorders.setup.record(nanos: connected &- start)
                try await caller.api.hangup(remoteUserId: callee.user)
                guard await reach(.prepared, &callerChanges, endings: [.idle]),
                    await reach(.prepared, &calleeChanges, endings: [.idle])
                else {
                    return (completed, 1)
                }
                recorders.hangup.record(nanos: BenchClock.nanos() &- connected)
                completed += 1
            } catch {
                return (completed, 1)
            }
        }
        return (completed, 0)
    }

    /// Reads state changes until `target`; false if the call ended on the way (any of `endings`), or the stream
    /// did (cancelled by the watchdog).
    static func reach(
        _ target: CallStateType, _ changes: inout AsyncStream<CallStateChange>.Iterator,
        endings: Set<CallStateType> = [.prepared, .failed, .idle]
    ) async -> Bool {
        while let change = await changes.next() {
            if change.state == target { return true }
            if endings.contains(change.state) { return false }
        }
        return false
    }
}

/// The latency distributions the call loops record into.
final class CallRecorders: Sendable {
    let ringing = LatencyRecorder()
    let connected = LatencyRecorder()
    let setup = LatencyRecorder()
    let hangup = LatencyRecorder()
}

/// One user: CallAPI over a signaling client to the peer, media from the simulated world.
struct CallEndpoint: Sendable {
    let user: UInt
    let api: CallApiImpl
    let signal: any BenchPeerClient

    static func make(user: UInt, peer: any BenchPeer, world: SimulatedRTCWorld, timeout: UInt64) async throws
        -> CallEndpoint
    {
        let signal = try await peer.client(user: "\(user)")
        let api = CallApiImpl()
        api.initialize(
            config: CallConfig(
                userId: user, rtcEngine: world.engine(userId: user), signalClient: signal, clock: SystemCallClock()))
        try await api.prepareForCall(
            prepareConfig: PrepareConfig(roomId: "room-\(user)", callTimeoutMillisecond: timeout))
        return CallEndpoint(user: user, api: api, signal: signal)
    }

    func close() async {
        await api.deinitialize()
        await signal.close()
    }
}
