import CallAPI
import Dispatch

/// The CallAPI state machine alone: two ``CallStateMachine``s wired back to back in one thread, with an instant
/// signaling channel and media plane played by the driver, through full calls (call → ring → accept → connected →
/// hangup). `callapi-bench machine` times it; `callapi-allocs` counts its allocations.
public struct MachineBench: Sendable {
    public struct Settings: Sendable {
        public var calls: Int

        public init(calls: Int = 100_000) { self.calls = calls }
    }

    public struct Report: Codable, Sendable {
        public var bench = "machine"
        public var calls: Int
        public var failedCalls: Int
        /// Inputs both machines handled per full call.
        public var inputsPerCall: Double
        /// Mean time in `handle(_:now:)` per input.
        public var nanosPerInput: Double
        /// Mean wall time per full call, the driver's work (encoding the messages it carries) included.
        public var microsPerCall: Double
        public var callsPerSecond: Double
    }

    public let settings: Settings

    public init(settings: Settings) { self.settings = settings }

    public func run() -> Report {
        var pair = MachinePair()
        pair.submit(0, .initialize(userId: MachinePair.users[0]))
        pair.submit(0, .prepare(PrepareConfig(roomId: "room-1", rtcToken: "token-1")))
        pair.submit(1, .initialize(userId: MachinePair.users[1]))
        pair.submit(1, .prepare(PrepareConfig(roomId: "room-2", rtcToken: "token-2")))
        pair.handled = 0
        pair.handleNanos = 0
        var failed = 0
        let start = MachineClock.nanos()
        for index in 0..<settings.calls {
            if !pair.fullCall(index) { failed += 1 }
        }
        let elapsed = Double(MachineClock.nanos() &- start)
        let calls = Double(max(1, settings.calls))
        return Report(
            calls: settings.calls, failedCalls: failed,
            inputsPerCall: (Double(pair.handled) / calls * 10).rounded() / 10,
            nanosPerInput: (Double(pair.handleNanos) / Double(max(1, pair.handled))).rounded(),
            microsPerCall: (elapsed / calls / 10).rounded() / 100, callsPerSecond: (calls / (elapsed / 1e9)).rounded())
    }
}

/// Two machines and what stands between them: a queue of inputs, an instant channel, a media plane.
struct MachinePair {
    static let users: [UInt] = [1, 2]
    var machines = [CallStateMachine(), CallStateMachine()]
    /// The media plane: each channel with the sides in it, a bit per side. A short list scanned in place: a
    /// dictionary of sets allocated its tables on every call.
    var channels: [(name: String, sides: UInt8)] = []
    var queue: [(side: Int, input: CallInput)] = []
    /// One buffer for every input's actions, as a shell that handles many inputs keeps one.
    var actions: [CallAction] = []
    var now: Int64 = 1_767_225_600_000
    var handled = 0
    var handleNanos: UInt64 = 0

    /// One call from side 0 to side 1, accepted and hung up; whether every step reached the expected state.
    mutating func fullCall(_ index: Int) -> Bool {
        now += 1_000
        submit(0, .call(remoteUserId: Self.users[1], type: .video, extension: nil, callId: "call-\(index)"))
        guard machines[1].state == .calling else { return recover() }
        submit(1, .accept(remoteUserId: Self.users[0]))
        guard machines[0].state == .connected, machines[1].state == .connected else { return recover() }
        submit(0, .hangup(remoteUserId: Self.users[1], reason: nil))
        guard machines[0].state == .prepared, machines[1].state == .prepared else { return recover() }
        return true
    }

    /// Hangs both sides up after a failed step, so the next call starts clean.
    private mutating func recover() -> Bool {
        submit(0, .hangup(remoteUserId: Self.users[1], reason: nil))
        submit(1, .hangup(remoteUserId: Self.users[0], reason: nil))
        return false
    }

    mutating func submit(_ side: Int, _ input: CallInput) {
        queue.append((side, input))
        var head = 0
        while head < queue.count {
            let next = queue[head]
            head += 1
            // Taken out while its actions are performed (they append to the queue), put back after: moving it
            // keeps its storage.
            var actions = self.actions
            self.actions = []
            actions.removeAll(keepingCapacity: true)
            let start = MachineClock.nanos()
            machines[next.side].handle(next.input, now: now, into: &actions)
            handleNanos += MachineClock.nanos() &- start
            handled += 1
            for action in actions { perform(action, side: next.side) }
            self.actions = actions
        }
        queue.removeAll(keepingCapacity: true)
    }

    private mutating func perform(_ action: CallAction, side: Int) {
        let other = 1 - side
        switch action {
        case .send(let message, _, _):
            let sender = SignalSender(userId: String(Self.users[side]))
            queue.append((other, .received(text: message.encoded(), sender: sender)))
            queue.append((side, .sendFinished(message, to: Self.users[other], error: nil)))
        case .joinRTC(let join):
            queue.append((side, .rtc(.localJoined(channel: join.channel, uid: join.uid))))
            let index: Int
            if let found = channels.firstIndex(where: { $0.name == join.channel }) {
                index = found
            } else {
                channels.append((join.channel, 0))
                index = channels.count - 1
            }
            channels[index].sides |= 1 << side
            if channels[index].sides & (1 << other) != 0 {
                for (me, peer) in [(side, other), (other, side)] {
                    queue.append((me, .rtc(.remoteJoined(channel: join.channel, uid: Self.users[peer]))))
                    queue.append(
                        (me, .rtc(.remoteFirstVideoFrameDecoded(channel: join.channel, uid: Self.users[peer]))))
                }
            }
        case .leaveRTC:
            for index in channels.indices { channels[index].sides &= ~(1 << side) }
            channels.removeAll { $0.sides == 0 }
        case .askCanJoinOnCalling(let callId, _):
            queue.append((side, .earlyJoinDecided(callId: callId, allowed: true)))
        default:
            break
        }
    }
}

/// Monotonic nanoseconds, without allocating.
enum MachineClock {
    static func nanos() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
}
