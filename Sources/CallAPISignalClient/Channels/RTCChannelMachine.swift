import CallAPISignalProtocol

/// One channel membership as a pure state machine: connect, join, relay, leave. No I/O, no clock.
struct RTCChannelMachine: Sendable {
    /// Where the membership is.
    enum Phase: Sendable, Equatable {
        /// The socket is opening.
        case connecting
        /// `join` was sent; waiting for `joined` or `joinFailed`.
        case joining
        /// A member.
        case joined
        /// Left, refused, removed or lost: nothing more happens.
        case ended
    }

    /// What happened.
    enum Input: Sendable, Equatable {
        case start
        case socketOpened
        case received(ChannelServerFrame)
        case unreadable(String)
        case socketClosed(cause: String)
        case send(data: String, to: ChannelMember)
        case renew(token: String)
        case leave
    }

    /// What to do.
    enum Output: Sendable, Equatable {
        /// Open a socket to `url` (a socket opened before is closed and forgotten).
        case openSocket(url: String)
        case write(ChannelClientFrame)
        case closeSocket
        case emit(RTCChannelClientEvent)
        case log(Level, String)
    }

    /// How loudly to log.
    enum Level: Sendable, Equatable {
        case info
        case warning
    }

    /// How many times a join follows the server to the node where the channel's members meet, at most (a cluster
    /// sends it once; more would be a loop).
    static let maxRedirects = 2

    let join: ChannelClientFrame.Join
    /// Where the socket connects: the given server, or the node a cluster sent the join to.
    private(set) var url: String
    private(set) var redirects = 0
    private(set) var phase = Phase.connecting
    /// Frames issued before `joined`, sent once it arrives.
    private(set) var pending: [ChannelClientFrame] = []

    init(url: String, channel: String, uid: UInt, device: String?, token: String) {
        self.url = url
        join = .init(channel: channel, uid: uid, token: token, device: device)
    }

    mutating func handle(_ input: Input) -> [Output] {
        switch input {
        case .start:
            return phase == .connecting ? [.openSocket(url: url)] : []
        case .socketOpened:
            guard phase == .connecting else { return [] }
            phase = .joining
            return [.write(.join(join))]
        case .received(let frame):
            return receive(frame)
        case .unreadable(let problem):
            return phase == .ended ? [] : [.log(.warning, "unreadable frame from the server: \(problem)")]
        case .socketClosed(let cause):
            switch phase {
            case .connecting, .joining:
                phase = .ended
                return [
                    .emit(
                        .joinFailed(
                            code: ChannelErrorCode.connectionLost.rawValue,
                            message: "could not join channel \(join.channel): \(cause)"))
                ]
            case .joined:
                phase = .ended
                return [
                    .emit(
                        .removed(
                            code: ChannelErrorCode.connectionLost.rawValue,
                            message: "the connection to channel \(join.channel) was lost: \(cause)"))
                ]
            case .ended:
                return []
            }
        case .send(let data, let to):
            return issue(.signal(.init(to: to, data: data)))
        case .renew(let token):
            return issue(.renew(.init(token: token)))
        case .leave:
            switch phase {
            case .connecting:
                phase = .ended
                return [.closeSocket]
            case .joining, .joined:
                phase = .ended
                pending = []
                return [.write(.leave), .closeSocket]
            case .ended:
                return []
            }
        }
    }

    private mutating func issue(_ frame: ChannelClientFrame) -> [Output] {
        switch phase {
        case .connecting, .joining:
            pending.append(frame)
            return []
        case .joined:
            return [.write(frame)]
        case .ended:
            return [.log(.warning, "\"\(frame.type)\" not sent: no longer in channel \(join.channel)")]
        }
    }

    private mutating func receive(_ frame: ChannelServerFrame) -> [Output] {
        switch (phase, frame) {
        case (.ended, _), (.connecting, _):
            return []
        case (.joining, .joined(let joined)):
            phase = .joined
            let queued = pending
            pending = []
            return [.emit(.joined(members: joined.devices, iceServers: joined.iceServers))] + queued.map { .write($0) }
        case (.joining, .joinFailed(let failure))
        where failure.errorCode == .channelElsewhere && failure.location != nil && redirects < Self.maxRedirects:
            // A cluster's node where the channel's members do not meet: join again at the node where they do.
            redirects += 1
            url = RTCChannelClient.joinURL(from: failure.location ?? url, channel: join.channel)
            phase = .connecting
            return [.log(.info, "\(failure.message): joining there"), .closeSocket, .openSocket(url: url)]
        case (.joining, .joinFailed(let failure)), (.joining, .removed(let failure)):
            phase = .ended
            pending = []
            return [.emit(.joinFailed(code: failure.code, message: failure.message)), .closeSocket]
        case (.joined, .removed(let failure)):
            phase = .ended
            return [.emit(.removed(code: failure.code, message: failure.message)), .closeSocket]
        case (.joined, .memberJoined(let member)):
            return [.emit(.memberJoined(member))]
        case (.joined, .memberLeft(let left)):
            return [.emit(.memberLeft(left.member, reason: left.reason))]
        case (.joined, .signal(let signal)):
            return [.emit(.signal(from: signal.sender, data: signal.data))]
        case (.joined, .tokenWillExpire):
            return [.emit(.tokenWillExpire)]
        case (.joined, .renewed(let renewed)):
            return [.log(.info, "token renewed; it expires at \(renewed.expiresAt)")]
        case (_, .signalFailed(let failed)):
            let target = ChannelMember(uid: failed.to, device: failed.device)
            return [.log(.warning, "signal to \(target) not relayed: \(failed.message)")]
        case (_, .error(let failure)):
            return [.log(.warning, "the server refused a frame (code \(failure.code)): \(failure.message)")]
        default:
            return [.log(.warning, "unexpected \"\(frame.type)\" frame while \(phase)")]
        }
    }
}
