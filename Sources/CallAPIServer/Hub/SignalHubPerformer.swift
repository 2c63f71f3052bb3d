@_spi(ServerShell) import CallAPIServerCore
import CallAPISignalProtocol
import Logging
import NIOCore

/// How the signaling hub performs ``HubState``'s own actions: frames written straight into the connections'
/// buffers, closes, the call ledger's bookkeeping and queries, the push queue, metrics and logs.
///
/// The ledger's bookkeeping and the push queue are synchronous and run under the shell's lock, in the order the
/// state decided; only the call-history queries (the ledger's store) await.
struct SignalHubPerformer: EndpointPerformer {
    let authority: TokenAuthority
    let clock: any SignalServerClock
    let metrics: ServerMetrics
    let logger: Logger
    /// The call ledger, fed every `send` the hub handles and every session that closes.
    let ledger: CallLedger?
    /// Performs the state's push actions (nil: pushes are dropped, registrations are not saved).
    let push: PushService?
    /// The link to the other nodes (nil: a single node).
    let cluster: ClusterLink?

    /// Work on the ledger's store for a session, answered when done: a call-history query, or a call report kept.
    struct CallsQuery {
        enum Request {
            case calls(userId: String, ClientFrame.CallsRequest)
            case report(StoredCallReport)
        }
        let id: SessionID
        let request: Request
        let ledger: CallLedger
    }

    func perform(
        _ action: consuming HubAction, in core: inout EndpointCore<HubState>, relayStartedAt: NIODeadline?
    ) -> EndpointDeferred<HubState, CallsQuery>? {
        switch consume action {
        case .relayed(let send):
            ledger?.handle(.relayed(send), now: clock.nowMillis())
        case .remoteSessionsGone(let standIn):
            ledger?.handle(.sessionClosed(standIn), now: clock.nowMillis())
        case .queryCalls(let id, let userId, let request):
            guard let ledger else { return nil }
            return .work(CallsQuery(id: id, request: .calls(userId: userId, request), ledger: ledger))
        case .storeReport(let id, let report):
            guard let ledger else { return nil }
            return .work(CallsQuery(id: id, request: .report(report), ledger: ledger))
        case .send(let id, let frame):
            guard let connection = core.connections[id] else { return nil }
            var startedAt: NIODeadline?
            observe(frame, session: id, core: &core)
            if case .message(let message) = frame, message.held != true {
                startedAt = relayStartedAt
                metrics.messageRelayed()
            }
            // The frames sent at high rates are written straight into the connection's buffer.
            if let bound = FrameCoding.lengthBound(frame) {
                connection.send(textAtMost: bound, relayStartedAt: startedAt) { FrameCoding.write(frame, into: $0) }
            } else {
                connection.send(utf8: FrameCoding.encodeUTF8(frame), relayStartedAt: startedAt)
            }
        case .close(let id, let code, let reason):
            metrics.closed(reason)
            logger.info(
                "closing session", metadata: ["session": "\(id)", "reason": "\(reason.rawValue)", "code": "\(code)"])
            guard let connection = core.connections[id] else { return nil }
            if reason == .slowConsumer { logger.warning("slow consumer closed", metadata: ["session": "\(id)"]) }
            EndpointShell<Self>.end(
                connection, code: code, reason: reason.rawValue, slowConsumer: reason == .slowConsumer)
        case .push(let pushAction):
            // Returns at once (it queues, or saves the small device file): keeps the order the state decided.
            push?.perform(pushAction)
        case .verifyToken(let id, let requestId, let token, let purpose):
            return .tokenCheck(token: token, context: (id, requestId, purpose))
        case .callNotPlaced(let call):
            logger.notice(
                "a server-placed call was not placed",
                metadata: ["callId": "\(call.callId)", "caller": "\(call.caller)", "reason": "\(call.reason)"])
            ledger?.handle(.notPlaced(call), now: clock.nowMillis())
        case .cluster(let clusterAction):
            // Queued, never awaited here: the link reports back through the hub's events.
            cluster?.perform(clusterAction)
        }
        return nil
    }

    func start(_ query: CallsQuery, in shell: EndpointShell<Self>) {
        Task {
            let frame =
                switch query.request {
                case .calls(let userId, let request): await query.ledger.answer(request, userId: userId)
                case .report(let report): await query.ledger.keep(report)
                }
            if case .report(let stored) = query.request, case .reported = frame {
                for (stage, millis) in CallStage.latencies(in: stored.report) {
                    metrics.callStage(stage, millis: millis)
                }
            }
            shell.handle(.ledgerAnswered(query.id, frame))
        }
    }

    func checkToken(_ token: String) async -> TokenCheck {
        await authority.checkLoginToken(token)
    }

    func publish(_ gauges: HubGauges) {
        metrics.update(gauges)
    }

    /// Counts and logs a frame sent. The core is lent `inout`, only read: passed by value, the state (656 bytes) was
    /// copied for every frame sent, twice per relayed message (scripts/callgrind_relay.sh).
    private func observe(_ frame: ServerFrame, session id: SessionID, core: inout EndpointCore<HubState>) {
        switch frame {
        case .answer(let answer):
            metrics.answer(answer)
            if answer.result == .failed {
                logger.notice(
                    "send failed",
                    metadata: [
                        "session": "\(id)", "user": "\(core.state.userId(of: id) ?? "-")",
                        "reason": "\(answer.reason?.rawValue ?? "-")",
                    ])
            }
        case .error(let error):
            metrics.error(error.code)
            logger.notice(
                "frame refused",
                metadata: [
                    "session": "\(id)", "user": "\(core.state.userId(of: id) ?? "-")", "code": "\(error.code.rawValue)",
                    "detail": "\(error.message)",
                ])
        case .welcome(let welcome):
            logger.info("logged in", metadata: ["session": "\(id)", "user": "\(welcome.userId)"])
        case .renewed(let renewed):
            logger.info(
                "token renewed",
                metadata: [
                    "session": "\(id)", "user": "\(core.state.userId(of: id) ?? "-")",
                    "expiresAt": "\(renewed.expiresAt)",
                ])
        default:
            break
        }
    }
}
