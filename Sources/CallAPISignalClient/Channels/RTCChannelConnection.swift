import CallAPISignalProtocol
import Logging
import NIOCore
import NIOPosix

/// One membership of an RTC channel, made by ``RTCChannelClient/join(url:channel:uid:device:token:logger:events:)``.
///
/// Its methods return at once and take effect in the order they are called. Signals and renewals issued before
/// ``RTCChannelClientEvent/joined(members:iceServers:)`` are kept and sent right after it. Releasing the connection leaves the
/// channel.
public final class RTCChannelConnection: Sendable {
    /// The channel.
    public let channel: String
    /// This member's uid.
    public let uid: UInt
    /// The device this member joined from, if it named one.
    public let device: String?
    private let gate: RTCChannelEventGate
    /// Calls from the synchronous API, in order, on the core's event loop.
    private let commands: LoopCommands<RTCChannelCore>

    init(
        url: String, channel: String, uid: UInt, device: String?, token: String, logger: Logger,
        events: @escaping @Sendable (RTCChannelClientEvent) -> Void
    ) {
        self.channel = channel
        self.uid = uid
        self.device = device
        let gate = RTCChannelEventGate(events)
        self.gate = gate
        let loop = MultiThreadedEventLoopGroup.singleton.any()
        let core = RTCChannelCore(
            url: url, channel: channel, uid: uid, device: device, token: token, gate: gate, loop: loop, logger: logger)
        commands = LoopCommands(core, on: loop)
        commands.yield { $0.start() }
    }

    deinit {
        gate.close()
        commands.yield { $0.leave() }
    }

    /// Relays `data` to `member` of the channel. If it is not there, the server says so (logged); a member
    /// without a device reaches the uid's only member, and is refused when the uid is there on several devices.
    public func send(data: String, to member: ChannelMember) {
        commands.yield { $0.send(data: data, to: member) }
    }

    /// Replaces the membership's token (after ``RTCChannelClientEvent/tokenWillExpire``) with a fresh RTC token for
    /// the same channel and uid. A refusal is logged; the membership ends when the old token expires.
    public func renewToken(_ token: String) {
        commands.yield { $0.renew(token: token) }
    }

    /// Leaves the channel. No event is delivered once this returns.
    public func leave() {
        gate.close()
        commands.yield { $0.leave() }
    }
}
