@_spi(ServerShell) import CallAPIServerCore
import CallAPISignalProtocol
import Logging
import NIOCore

/// How the channel endpoint performs ``ChannelState``'s own actions: frames written to the connections, closes,
/// and the members' comings and goings (logs, metrics, the webhook), which are reported once the lock is released.
struct ChannelHubPerformer: EndpointPerformer {
    let authority: TokenAuthority
    let metrics: ServerMetrics
    let webhook: WebhookNotifier?
    /// In a cluster: where channels are claimed.
    let homes: (any ChannelHomeKeeper)?
    let logger: Logger

    /// What waits until the shell's lock is released.
    enum Work {
        /// A member came or went: logs, metrics, the webhook.
        case notice(ChannelNotice)
        case claimHome(SessionID, channel: String)
        case releaseHome(channel: String)
    }

    func perform(
        _ action: consuming ChannelAction, in core: inout EndpointCore<ChannelState>, relayStartedAt: NIODeadline?
    ) -> EndpointDeferred<ChannelState, Work>? {
        switch consume action {
        case .send(let id, let frame):
            observe(frame, connection: id, core: &core)
            core.connections[id]?.send(text: ChannelFrameCoding.encode(frame))
        case .close(let id, let code):
            metrics.channelClosed(code: code)
            guard let connection = core.connections[id] else { return nil }
            let slowConsumer = code == ChannelErrorCode.slowConsumer.closeCode
            if slowConsumer { logger.warning("slow consumer closed", metadata: ["connection": "\(id)"]) }
            EndpointShell<Self>.end(connection, code: code, reason: nil, slowConsumer: slowConsumer)
        case .report(let notice):
            // After the lock is released (see start).
            return .work(.notice(notice))
        case .claimHome(let id, let channel):
            return .work(.claimHome(id, channel: channel))
        case .releaseHome(let channel):
            return .work(.releaseHome(channel: channel))
        case .verifyToken(let id, let token, let purpose):
            return .tokenCheck(token: token, context: (id, purpose))
        }
        return nil
    }

    func start(_ work: Work, in shell: EndpointShell<Self>) {
        switch work {
        case .notice(let notice):
            report(notice)
        case .claimHome(let id, let channel):
            guard let homes else { return shell.handle(.homeFound(id, channel: channel, .here)) }
            homes.claim(channel) { home in shell.handle(.homeFound(id, channel: channel, home)) }
        case .releaseHome(let channel):
            homes?.release(channel)
        }
    }

    /// Logs and counts a member's coming or going, and posts it to the webhook.
    private func report(_ notice: ChannelNotice) {
        var metadata: Logger.Metadata = [
            "channel": "\(notice.channel)", "uid": "\(notice.uid)", "reason": "\(notice.reason.rawValue)",
        ]
        if let device = notice.device { metadata["device"] = "\(device)" }
        switch notice.reason {
        case .kicked:
            metrics.channelKick()
            logger.notice("channel member kicked", metadata: metadata)
        case .watchdog:
            metrics.channelWatchdogRemoval()
            logger.warning("channel watchdog removed a member left alone", metadata: metadata)
        default:
            logger.info(
                notice.event == .userJoined ? "channel member joined" : "channel member left", metadata: metadata)
        }
        webhook?.post(notice)
    }

    func checkToken(_ token: String) async -> ChannelTokenCheck {
        await authority.checkChannelToken(token)
    }

    func publish(_ gauges: ChannelGauges) {
        metrics.update(gauges)
    }

    /// Counts and logs a frame sent. The core is lent `inout`, only read: passed by value, the state was copied for
    /// every frame sent; and who the frame went to is looked up only for a frame that is logged.
    private func observe(_ frame: ChannelServerFrame, connection id: SessionID, core: inout EndpointCore<ChannelState>)
    {
        func who() -> Logger.Metadata {
            guard let member = core.state.member(id) else { return ["connection": "\(id)"] }
            return ["connection": "\(id)", "channel": "\(member.channel)", "member": "\(member.member)"]
        }
        switch frame {
        case .signal:
            metrics.channelSignalRelayed()
        case .joinFailed(let failure):
            logger.notice(
                "channel join refused",
                metadata: who().merging(["code": "\(failure.code)", "detail": "\(failure.message)"]) { $1 })
        case .error(let failure):
            logger.notice(
                "channel frame refused",
                metadata: who().merging(["code": "\(failure.code)", "detail": "\(failure.message)"]) { $1 })
        case .signalFailed(let failed):
            logger.info("channel signal not relayed", metadata: who().merging(["to": "\(failed.to)"]) { $1 })
        default:
            break
        }
    }
}
