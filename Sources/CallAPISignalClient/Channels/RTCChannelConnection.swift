import Logging

/// One membership of an RTC channel, made by ``RTCChannelClient/join(url:channel:uid:token:logger:events:)``.
///
/// Its methods return at once and take effect in the order they are called. Signals and renewals issued before
/// ``RTCChannelClientEvent/joined(members:)`` are kept and sent right after it. Releasing the connection leaves the
/// channel.
public final class RTCChannelConnection: Sendable {
    /// The channel.
    public let channel: String
    /// This member's uid.
    public let uid: UInt
    private let gate: RTCChannelEventGate
    /// Calls from the synchronous API, in order.
    private let commands: AsyncStream<@Sendable (RTCChannelCore) async -> Void>.Continuation

    init(
        url: String, channel: String, uid: UInt, token: String, logger: Logger,
        events: @escaping @Sendable (RTCChannelClientEvent) -> Void
    ) {
        self.channel = channel
        self.uid = uid
        let gate = RTCChannelEventGate(events)
        self.gate = gate
        let core = RTCChannelCore(url: url, channel: channel, uid: uid, token: token, gate: gate, logger: logger)
        let (stream, continuation) = AsyncStream.makeStream(of: (@Sendable (RTCChannelCore) async -> Void).self)
        commands = continuation
        Task {
            for await command in stream { await command(core) }
        }
        continuation.yield { await $0.start() }
    }

    deinit {
        gate.close()
        commands.yield { await $0.leave() }
        commands.finish()
    }

    /// Relays `data` to the member `uid` of the channel. If `uid` is not there, the server says so (logged).
    public func send(data: String, to uid: UInt) {
        commands.yield { await $0.send(data: data, to: uid) }
    }

    /// Replaces the membership's token (after ``RTCChannelClientEvent/tokenWillExpire``) with a fresh RTC token for
    /// the same channel and uid. A refusal is logged; the membership ends when the old token expires.
    public func renewToken(_ token: String) {
        commands.yield { await $0.renew(token: token) }
    }

    /// Leaves the channel. No event is delivered once this returns.
    public func leave() {
        gate.close()
        commands.yield { await $0.leave() }
    }
}
