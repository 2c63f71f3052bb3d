@_spi(ServerShell) import CallAPIServerCore
import CallAPISignalProtocol
import Logging
import NIOCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The signaling endpoint (`/v1/signal`): runs ``HubState`` in an ``EndpointShell``, which has
/// ``SignalHubPerformer`` perform its actions (writes, closes, the call ledger, pushes, metrics, logs).
///
/// What is the hub's own: reading a frame from its bytes, the ledger's busy answer in place of a relayed call, and
/// the operator's and the business server's requests (devices, server-placed calls).
final class SignalHub: SessionEndpoint {
    private let shell: EndpointShell<SignalHubPerformer>
    private let logger: Logger
    /// The call ledger, which may answer busy for a user who is in another call.
    private let ledger: CallLedger?
    let limits: HubLimits
    let maxMessageBytes: Int

    init(
        limits: HubLimits, authority: TokenAuthority, clock: any SignalServerClock, metrics: ServerMetrics,
        logger: Logger, pushPolicy: PushPolicy = PushPolicy(), devices: DeviceRegistry = DeviceRegistry(),
        push: PushService? = nil, ledger: CallLedger? = nil, cluster: ClusterLink? = nil
    ) {
        shell = EndpointShell(
            state: HubState(
                limits: limits, pushPolicy: pushPolicy, devices: devices, reportsRelays: ledger != nil,
                // Random per run, so that the ids of matched calls never repeat an earlier run's in the ledger, and
                // (on a cluster) other nodes never mistake one run's invitation for another's.
                runId: String(UInt64.random(in: 1 ... .max), radix: 36),
                topology: cluster.map { .node($0.settings.nodeId) } ?? .single),
            performer: SignalHubPerformer(
                authority: authority, clock: clock, metrics: metrics, logger: logger, ledger: ledger, push: push,
                cluster: cluster),
            clock: clock, connectionMetrics: metrics)
        self.limits = limits
        maxMessageBytes = Self.hardLimit(for: limits)
        self.ledger = ledger
        self.logger = logger
    }

    /// Messages larger than this close the socket (1009) instead of getting a `too_large` answer.
    static func hardLimit(for limits: HubLimits) -> Int { max(limits.maxFrameBytes * 4, 1 << 20) }

    var onlineUsers: [String] { shell.read { $0.state.onlineUsers } }
    var matchWaitingCount: Int { shell.read { $0.state.matchWaitingCount } }
    var sessionCount: Int { shell.read { $0.state.sessionCount } }
    /// Records the hub's gauges as they are now (before the metrics are rendered).
    func publishGauges() { shell.publishGauges() }
    /// When each connection open now closes. A closed session leaves the state at once, but its connection stays
    /// open until it has written the close and the client has gone; shutdown drains these.
    var connectionCloses: [EventLoopFuture<Void>] { shell.connectionCloses }

    func open(channel: any Channel, flusher: LoopFlusher) -> WebSocketConnection {
        shell.open(channel: channel, flusher: flusher) { connection in
            logger.debug("connection opened", metadata: ["session": "\(connection.id)"])
        }
    }

    func received(utf8 text: UnsafeBufferPointer<UInt8>, on id: SessionID, at instant: NIODeadline) -> Bool {
        // Parsed before taking the lock, so that connections on other loops parse at the same time.
        received(Self.decode(utf8: text, maxFrameBytes: limits.maxFrameBytes), on: id, at: instant)
    }

    /// A text message arrived on `id`, decoded as ``decode(utf8:maxFrameBytes:)`` does. Returns whether the session is
    /// still open: once the hub has closed it, its connection reads no further.
    @discardableResult
    func received(_ message: consuming DecodedMessage, on id: SessionID, at instant: NIODeadline) -> Bool {
        let now = shell.clock.nowMillis()
        // Moved, not copied, from the message into the event and from the event into the state: the frame holds
        // the relayed body (callgrind: the copies and their releases were ~1,000 instructions per relayed message).
        var event: HubEvent? =
            switch consume message {
            case .oversized(let bytes, let requestId, let isSend):
                .oversized(id, bytes: bytes, requestId: requestId, isSend: isSend)
            case .frame(let frame): .frame(id, frame)
            case .undecodable(let error): .undecodable(id, error)
            }
        return shell.handle(
            now: now, relayStartedAt: instant,
            { core in
                guard let event = event.take() else { preconditionFailure("an event is handled once") }
                // Not `answeredBusy(…) ?? event`: its autoclosure copied the event.
                if let busy = answeredBusy(event, core: &core, now: now) { return busy }
                return event
            }, answer: { HubState.isOpen(id, in: &$0.state) })
    }

    /// A received text, read and checked against the frame limit.
    enum DecodedMessage: Sendable {
        case frame(ClientFrame)
        case undecodable(FrameDecodingError)
        case oversized(bytes: Int, requestId: Int?, isSend: Bool)
    }

    /// Reads a text message's bytes (valid UTF-8) as a client frame, checking the size limit.
    static func decode(utf8 text: UnsafeBufferPointer<UInt8>, maxFrameBytes: Int) -> DecodedMessage {
        // Size before parse: an oversized frame is refused from a look at its first bytes, never parsed.
        if text.count > maxFrameBytes {
            let head = FrameHeadPeek(utf8: text)
            return .oversized(
                bytes: text.count, requestId: head.requestId, isSend: head.type == ClientFrame.Kind.send.rawValue)
        }
        switch FrameCoding.decodeClientFrame(utf8: text) {
        case .success(let frame): return .frame(frame)
        case .failure(let error): return .undecodable(error)
        }
    }

    /// The ledger's busy answer in place of relaying a call to a user who is in another call (when it answers busy).
    /// (`core` is only read; `inout` so that it is not copied to be passed.)
    private func answeredBusy(_ event: HubEvent, core: inout EndpointCore<HubState>, now: Int64) -> HubEvent? {
        // The setting first: matching the event copies the send, and the sender's user is a table look-up.
        guard let ledger, ledger.answersBusy, case .frame(let id, .send(let send)) = event,
            let user = core.state.userId(of: id),
            let body = ledger.busyAnswer(
                to: RelayedSendRequest(from: user, to: send.to, body: send.relayBody), now: now)
        else { return nil }
        return .answeredOnBehalf(id, send, body: body)
    }

    func receivedBinary(on id: SessionID) {
        shell.receivedBinary(on: id)
    }

    func closed(_ id: SessionID) {
        // Under the same lock, so the ledger learns of the close in the order the hub saw it.
        shell.closed(id) { now in ledger?.handle(.sessionClosed(id), now: now) }
        logger.debug("connection closed", metadata: ["session": "\(id)"])
    }

    /// Runs the time-based checks now.
    func tick() {
        var abandoned: [AbandonedRing] = []
        shell.tick { now in abandoned = ledger?.handle(.tick, now: now) ?? [] }
        // After the tick, under the lock again: the ledger ran inside the hub's event and cannot feed it.
        for ring in abandoned { shell.handle(.ringAbandoned(ring)) }
    }

    /// Applies what the cluster link reports.
    func handleCluster(_ event: ClusterEvent) {
        shell.handle(.cluster(event))
    }

    /// Every logged-in session on this node with its user (the cluster link writes them whole after joining).
    var loggedInSessions: [SessionRow] { shell.read { $0.state.loggedInSessions } }

    /// Applies a push event (a provider's rejection, the operator's removal of a device).
    func handlePush(_ event: HubEvent) {
        shell.handle(event)
    }

    /// The push device registry now.
    var devices: DeviceRegistry { shell.read { $0.state.devices } }

    /// Removes `userId`'s device `deviceId` (the operator's request); returns whether it was there.
    func removeDevice(_ deviceId: String, of userId: String) -> Bool {
        var existed = false
        shell.handle(now: shell.clock.nowMillis()) { core in
            existed = core.state.devices.devices(of: userId).contains { $0.device.deviceId == deviceId }
            return .removeDevice(userId: userId, deviceId: deviceId)
        }
        return existed
    }

    /// Asks `order.caller`'s newest session to place a call to `order.callee` with a new call id (docs/match.md);
    /// returns the call id, or why the call cannot be placed now.
    func placeCall(_ order: PlaceCallOrder) -> Result<String, PlaceCallRefusal> {
        for user in [order.caller, order.callee] {
            if let callId = ledger?.busyCall(of: user) { return .failure(.busy(user: user, callId: callId)) }
        }
        let now = shell.clock.nowMillis()
        let callId = UUID().uuidString
        let refusal = shell.handle(
            now: now, { _ in .placeCall(order, callId: callId) },
            answer: { core in
                core.state.awaitsPlacement(of: callId) || core.state.placesElsewhere(order)
                    ? nil : core.state.placementProblem(order) ?? .offline(user: order.caller)
            })
        if let refusal { return .failure(refusal) }
        logger.info(
            "call placed by the server",
            metadata: ["callId": "\(callId)", "caller": "\(order.caller)", "callee": "\(order.callee)"])
        return .success(callId)
    }

    /// Ends every connection still open (shutdown, once the drain time is over).
    func abortRemaining() {
        shell.abortRemaining()
    }

    /// Tells every session the server is going away and closes them.
    func shutdown() {
        shell.shutdown()
    }
}
