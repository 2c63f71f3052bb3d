@_spi(ServerShell) import CallAPIServerCore
import NIOConcurrencyHelpers
import NIOCore

/// A WebSocket endpoint's shell, the same for the signaling hub and the channels: runs the endpoint's
/// ``SessionMachine`` and has its ``EndpointPerformer`` perform the actions.
///
/// It runs on the event loop of the connection whose frame arrived, under a lock: the state stays one pure value,
/// and what it sends is queued straight on the receivers' ``WebSocketConnection``s, which their own loops write
/// once per tick. Only what awaits leaves the loop, after the lock is released: token checks (the authority is an
/// actor) and the performer's own awaited work. A final generic class, not a protocol with existentials: each
/// endpoint's shell is specialised, so a relayed message costs no dynamic dispatch nor allocation here.
final class EndpointShell<Performer: EndpointPerformer>: Sendable {
    typealias Machine = Performer.Machine
    typealias Core = EndpointCore<Machine>

    /// How long a closed connection may take to write what is queued and the close frame.
    static var closeGrace: TimeAmount { .seconds(5) }

    /// An action list that grew beyond this many is let go after its event.
    private static var keptActions: Int { 64 }

    let performer: Performer
    let clock: any SignalServerClock
    /// Frames the connections wrote, fed to the state before each event.
    let writes = WriteTally()
    private let core: NIOLockedValueBox<Core>
    /// Given to each connection (for the relay latency), or nil.
    private let connectionMetrics: ServerMetrics?

    init(state: Machine, performer: Performer, clock: any SignalServerClock, connectionMetrics: ServerMetrics?) {
        core = NIOLockedValueBox(Core(state: state))
        self.performer = performer
        self.clock = clock
        self.connectionMetrics = connectionMetrics
    }

    /// Reads the core under the lock.
    func read<Value>(_ body: (Core) -> Value) -> Value { core.withLockedValue { body($0) } }

    /// Records the machine's gauges as they are now. Called when the metrics are read, not after each event: the
    /// queue gauges changed with nearly every relayed message, and recording six gauges each time cost ~200
    /// instructions of every relayed message (scripts/callgrind_relay.sh).
    func publishGauges() {
        let gauges = core.withLockedValue { $0.state.gauges }
        performer.publish(gauges)
    }

    /// When each connection open now closes. A closed session leaves the state at once, but its connection stays
    /// open until it has written the close and the client has gone; shutdown drains these.
    var connectionCloses: [EventLoopFuture<Void>] { core.withLockedValue { $0.connections.closes } }

    // MARK: - Connections

    /// Registers a connection opened on `channel` and tells the state; `registered` sees it under the lock first.
    func open(
        channel: any Channel, flusher: LoopFlusher, registered: (WebSocketConnection) -> Void = { _ in }
    ) -> WebSocketConnection {
        var opened: WebSocketConnection?
        handle(now: clock.nowMillis()) { core in
            let connection = core.connections.open(
                channel: channel, flusher: flusher, tally: writes, metrics: connectionMetrics)
            opened = connection
            registered(connection)
            return .connected(connection.id)
        }
        // Set by the closure above, which always runs.
        return opened!
    }

    /// `id`'s socket closed: forgets the connection and tells the state; `then` runs under the same lock, at the
    /// same `now`.
    func closed(_ id: SessionID, then: (_ now: Int64) -> Void = { _ in }) {
        let now = clock.nowMillis()
        handle(
            now: now,
            { core in
                core.connections.remove(id)
                return .disconnected(id)
            }, answer: { _ in then(now) })
    }

    func receivedBinary(on id: SessionID) {
        handle(.binary(id))
    }

    /// Runs the time-based checks now; `then` runs under the same lock, at the same `now`.
    func tick(then: (_ now: Int64) -> Void = { _ in }) {
        let now = clock.nowMillis()
        handle(now: now, { _ in .tick }, answer: { _ in then(now) })
    }

    /// Tells the state the server is going away (it closes every session).
    func shutdown() {
        handle(.shutdown)
    }

    /// Ends every connection still open (shutdown, once the drain time is over).
    func abortRemaining() {
        for connection in core.withLockedValue({ Array($0.connections.connections.values) }) { connection.abort() }
    }

    /// Ends `connection`, which its state closed: a slow consumer's at once (its socket is stuck behind the
    /// backlog, a close frame would queue behind it), any other's with a close frame and ``closeGrace`` to write it.
    static func end(_ connection: WebSocketConnection, code: UInt16, reason: String?, slowConsumer: Bool) {
        if slowConsumer {
            connection.abort()
            return
        }
        connection.close(code: code, reason: reason)
        // A client that does not read would keep its socket forever with the close queued behind what it does not
        // read: after a grace period the connection is ended anyway (a no-op if it is gone).
        let channel = connection.channel
        channel.eventLoop.scheduleTask(in: closeGrace) { channel.close(promise: nil) }
    }

    // MARK: - Events

    /// Handles `event` at the clock's now.
    func handle(_ event: Machine.Event) {
        handle(now: clock.nowMillis()) { _ in event }
    }

    /// Handles the event `prepare` registers and names, at `now`.
    func handle(now: Int64, _ prepare: (inout Core) -> Machine.Event) {
        handle(now: now, prepare, answer: { _ in })
    }

    /// Under the lock: `prepare` registers what the event needs and names it, and the state handles it at `now`
    /// (see ``apply(now:relayStartedAt:_:answer:)``, which performs the actions and reads `answer`).
    func handle<Answer>(
        now: Int64, relayStartedAt: NIODeadline? = nil, _ prepare: (inout Core) -> Machine.Event,
        answer: (inout Core) -> Answer
    ) -> Answer {
        apply(
            now: now, relayStartedAt: relayStartedAt,
            { core, actions in
                let event = prepare(&core)
                // Moved in explicitly: left implicit, the event was copied into the call and the original destroyed
                // after it (callgrind: ~250 instructions of every relayed message).
                core.state.handle(consume event, now: now, into: &actions)
            }, answer: answer)
    }

    /// Under the lock: the writes reported since the last event are fed to the state, `change` changes the state
    /// at `now` and collects its actions, the actions are performed in order, and `answer` reads the outcome.
    /// Work that awaits (token checks, the performer's own) starts once the lock is released, in the order its
    /// actions came. `answer` only reads; it takes the core `inout` because a borrowed core was copied whole to be
    /// read (a memcpy and a release of every field after each relayed message; scripts/callgrind_relay.sh).
    func apply<Answer>(
        now: Int64, relayStartedAt: NIODeadline? = nil, _ change: (inout Core, inout [Machine.Action]) -> Void,
        answer: (inout Core) -> Answer
    ) -> Answer {
        let (answer, deferred) = core.withLockedValue { core -> (Answer, [Deferred]) in
            var actions = core.actions
            core.actions = []
            // A written event adds no action: the buffer is still empty when the change's own actions come.
            writes.drain { id, frames in core.state.handle(.written(id, frames: frames), now: now, into: &actions) }
            change(&core, &actions)
            var deferred: [Deferred] = []
            // Moved out one by one, in order (reversed in place, then popped): a `for` loop copied each action and
            // released the copy and the original apart (callgrind: ~1,300 instructions per relayed message). Not a
            // helper taking a closure: through the closure's parameter each action was copied again.
            actions.withUnsafeMutableBufferPointer { $0.reverse() }
            while let action = actions.popLast() {
                if let work = performer.perform(consume action, in: &core, relayStartedAt: relayStartedAt) {
                    deferred.append(work)
                }
            }
            // Kept for the next event unless one event (a shutdown, a tick) made it large.
            if actions.capacity <= Self.keptActions { core.actions = actions }
            return (answer(&core), deferred)
        }
        for work in deferred { start(work) }
        return answer
    }

    typealias Deferred = EndpointDeferred<Machine, Performer.AwaitedWork>

    private func start(_ deferred: Deferred) {
        switch deferred {
        case .tokenCheck(let token, let context):
            Task {
                let verdict = await performer.checkToken(token)
                handle(Machine.tokenChecked(context, verdict: verdict))
            }
        case .work(let work):
            performer.start(work, in: self)
        }
    }
}
