import CallAPI
import CallAPITesting
import NIOCore

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
        /// Whether each endpoint keeps a ``CallTrace``, so that a failed call's report says what both sides saw.
        /// Off for timed runs: recording costs the clients a little per message.
        var traceFailures = false
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
        /// For each failed call: the step it failed at and, with ``Settings/traceFailures``, what both sides saw.
        var failures: [String] = []
    }

    let settings: Settings

    func run(log: @Sendable (String) -> Void = { _ in }) async throws -> Report {
        let peer = try await settings.peer.start(orderedSends: true)
        let world = SimulatedRTCWorld(clock: SystemCallClock())
        var endpoints: [(caller: CallEndpoint, callee: CallEndpoint)] = []
        log("logging in \(settings.pairs * 2) endpoints to \(peer.title)")
        do {
            for index in 0..<settings.pairs {
                let loop = BenchLoops.forPair(index)
                let caller = try await CallEndpoint.make(
                    user: UInt(300_000 + index), peer: peer, loop: loop, world: world,
                    timeout: settings.callTimeoutMillis, traced: settings.traceFailures)
                let callee = try await CallEndpoint.make(
                    user: UInt(400_000 + index), peer: peer, loop: loop, world: world,
                    timeout: settings.callTimeoutMillis, traced: settings.traceFailures)
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
        let outcomes = await withTaskGroup(of: CallLoopOutcome?.self) { group in
            for pair in endpoints {
                group.addTask { await Self.callLoop(pair.caller, pair.callee, until: deadline, recorders: recorders) }
            }
            // A watchdog: a pair stuck past the ring timeout is cancelled, which ends its state streams.
            group.addTask {
                try? await Task.sleep(for: .seconds(grace))
                return nil
            }
            var completed = 0, failures: [String] = [], running = endpoints.count
            for await outcome in group {
                guard let outcome else {
                    group.cancelAll()
                    continue
                }
                completed += outcome.completed
                if let failure = outcome.failure { failures.append(failure) }
                running -= 1
                if running == 0 { group.cancelAll() }
            }
            return (completed, failures)
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
            failed: outcomes.1.count, callsPerSecond: (Double(outcomes.0) / elapsed).rounded(),
            callToRinging: recorders.ringing.summary, acceptToConnected: recorders.connected.summary,
            setup: recorders.setup.summary, hangup: recorders.hangup.summary, failures: outcomes.1)
    }

    /// How one pair's loop ended: the calls it completed and, if a call failed, why.
    struct CallLoopOutcome: Sendable {
        var completed: Int
        var failure: String?
    }

    /// Calls until `deadline`. A failed call ends the loop (the pair is then in an unknown state).
    static func callLoop(
        _ caller: CallEndpoint, _ callee: CallEndpoint, until deadline: UInt64, recorders: CallRecorders
    )
        async -> CallLoopOutcome
    {
        var callerChanges = caller.api.stateChanges.makeAsyncIterator()
        var calleeChanges = callee.api.stateChanges.makeAsyncIterator()
        var completed = 0
        func failed(_ step: String, since start: UInt64) -> CallLoopOutcome {
            let millis = (BenchClock.nanos() &- start) / 1_000_000
            var report = "call \(completed + 1) of \(caller.user) → \(callee.user): \(step), \(millis) ms after call()"
            report += "; caller \(caller.api.state), callee \(callee.api.state)"
            for endpoint in [caller, callee] {
                guard let trace = endpoint.trace else { continue }
                report += "\n  \(endpoint.user) saw:\n    " + trace.lines.joined(separator: "\n    ")
            }
            return CallLoopOutcome(completed: completed, failure: report)
        }
        while BenchClock.nanos() < deadline {
            let start = BenchClock.nanos()
            do {
                try await caller.api.call(remoteUserId: callee.user, callType: .video)
                guard await reach(.calling, &calleeChanges, endings: [.failed, .idle]) else {
                    return failed("the callee did not ring", since: start)
                }
                let ringing = BenchClock.nanos()
                recorders.ringing.record(nanos: ringing &- start)
                try await callee.api.accept(remoteUserId: caller.user)
                guard await reach(.connected, &calleeChanges) else {
                    return failed("the callee did not connect", since: start)
                }
                guard await reach(.connected, &callerChanges) else {
                    return failed("the caller did not connect", since: start)
                }
                let connected = BenchClock.nanos()
                recorders.connected.record(nanos: connected &- ringing)
                recorders.setup.record(nanos: connected &- start)
                try await caller.api.hangup(remoteUserId: callee.user)
                guard await reach(.prepared, &callerChanges, endings: [.idle]) else {
                    return failed("the caller did not end the call", since: start)
                }
                guard await reach(.prepared, &calleeChanges, endings: [.idle]) else {
                    return failed("the callee did not end the call", since: start)
                }
                recorders.hangup.record(nanos: BenchClock.nanos() &- connected)
                completed += 1
            } catch {
                return failed("CallAPI refused a request: \(error)", since: start)
            }
        }
        return CallLoopOutcome(completed: completed)
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
    /// What this endpoint saw, when the bench traces failures.
    let trace: CallTrace?

    static func make(
        user: UInt, peer: any BenchPeer, loop: any EventLoop, world: SimulatedRTCWorld, timeout: UInt64, traced: Bool
    ) async throws -> CallEndpoint {
        let trace = traced ? CallTrace(user: user) : nil
        let client = try await peer.client(user: "\(user)", on: loop)
        let signal = trace.map { TracedSignalClient(client, trace: $0) } ?? client
        let api = CallApiImpl()
        if let trace { api.addListener(listener: trace) }
        api.initialize(
            config: CallConfig(
                userId: user, rtcEngine: world.engine(userId: user), signalClient: signal, clock: SystemCallClock()))
        try await api.prepareForCall(
            prepareConfig: PrepareConfig(roomId: "room-\(user)", callTimeoutMillisecond: timeout))
        return CallEndpoint(user: user, api: api, signal: signal, trace: trace)
    }

    func close() async {
        await api.deinitialize()
        await signal.close()
    }
}
