import CallAPI
import Foundation

/// A stand-in for a deployed CallAPI 2.x client (iOS or Web flavour) on an ``InMemorySignalNetwork`` and a
/// ``SimulatedRTCWorld``, so that apps and tests can check how an endpoint of this library gets on with
/// the clients already in users' hands. It behaves as those clients do, faults included: it acknowledges
/// nothing, de-duplicates nothing, answers busy with its own call's id, and a repeated call rings it again.
///
/// Drive it like an app would (``call(_:type:)``, ``accept()``, ``reject(reason:)``, ``cancel()``,
/// ``hangup(reason:)``) and read what it went through: ``state``, ``stateChanges``, ``received``.
/// Its ring timer runs on the network's clock.
public final class LegacyCallEndpoint: ISignalClientListener {
    /// A state change the endpoint reported to its app.
    public struct StateChange: Sendable, Equatable, CustomStringConvertible {
        /// The state it entered.
        public var state: CallStateType
        /// Why.
        public var reason: CallStateReason
        public var description: String { "\(state)(\(reason))" }
    }

    /// A message as it arrived.
    public struct Received: Sendable, Equatable {
        /// The text as delivered.
        public var text: String
        /// Its action number, or nil when it had none.
        public var action: Int?
    }

    private struct Core: Sendable {
        var machine: LegacyCallMachine
        /// Inputs waiting while an earlier one's actions are performed: like the deployed clients' one
        /// event loop, an input is handled only after the previous one's actions all ran.
        var pending: [LegacyInput] = []
        var draining = false
        var timer: (any CallTimer)?
        var changes: [StateChange] = []
        var received: [Received] = []
    }

    /// Which deployed client it behaves like.
    public let flavour: LegacyFlavour
    /// Its user id on the network.
    public let userId: UInt
    private let client: InMemorySignalClient
    private let engine: SimulatedRTCEngine
    private let clock: any CallClock
    private let makeCallId: @Sendable () -> String
    private let core: Locked<Core>

    /// - Parameters:
    ///   - ringTimeoutMillis: its `callTimeoutMillisecond` (both clients default to 15 s); 0 turns the
    ///     ring timer off.
    ///   - makeCallId: the ids of the calls it places (default: UUIDs).
    public init(
        _ flavour: LegacyFlavour, userId: UInt, network: InMemorySignalNetwork, world: SimulatedRTCWorld,
        ringTimeoutMillis: Int64 = 15_000, makeCallId: @escaping @Sendable () -> String = { UUID().uuidString }
    ) {
        self.flavour = flavour
        self.userId = userId
        client = network.client(userId: userId)
        engine = world.engine(userId: userId)
        clock = network.clock
        self.makeCallId = makeCallId
        core = Locked(
            Core(
                machine: LegacyCallMachine(
                    flavour: flavour, userId: userId, room: "legacy-\(flavour)-\(userId)",
                    ringTimeoutMillis: ringTimeoutMillis)))
        // The endpoint owns its engine for its whole life, so the listener is never removed.
        _ = engine.addEventListener { [weak self] event in self?.rtcEvent(event) }
        client.addListener(listener: self)
    }

    /// Where it stands now.
    public var state: LegacyCallState { core.withLock { $0.machine.state } }
    /// Every state change it reported, in order.
    public var stateChanges: [StateChange] { core.withLock { $0.changes } }
    /// Every message it received, in order.
    public var received: [Received] { core.withLock { $0.received } }
    /// The action numbers it received that the deployed clients do not know (they drop them).
    public var unknownActionsReceived: [Int] {
        received.compactMap(\.action).filter { MessageAction(rawValue: $0).map { !$0.isLegacy } ?? true }
    }
    /// Texts it received more than once: what the deployed clients would act on again.
    public var repeatedMessages: [String] {
        var seen = Set<String>()
        var repeated: [String] = []
        for message in received where !seen.insert(message.text).inserted { repeated.append(message.text) }
        return repeated
    }

    // MARK: - What its app does

    /// Calls `user`; ignored unless prepared, as the deployed clients refuse.
    public func call(_ user: UInt, type: CallType = .video) { run(.call(to: user, type: type, callId: makeCallId())) }
    /// Accepts the ringing call; ignored unless called.
    public func accept() { run(.accept) }
    /// Rejects the current call.
    public func reject(reason: String? = nil) { run(.reject(reason: reason)) }
    /// Cancels its own call.
    public func cancel() { run(.cancel) }
    /// Hangs up the current call.
    public func hangup(reason: String? = nil) { run(.hangup(reason: reason)) }

    // MARK: - Inputs from the channel and the media

    /// A message from the network, handled as the deployed clients do: the sender is whoever the body's
    /// `fromUserId` names.
    public func onMessageReceive(message: String) {
        let action = (try? JSONDecoder().decode([String: JSONValue].self, from: Data(message.utf8)))?[
            CallMessageKey.messageAction.name]?.intValue
        core.withLock { $0.received.append(Received(text: message, action: action)) }
        run(.received(message))
    }

    private func rtcEvent(_ event: RTCEngineEvent) {
        switch event {
        case .remoteFirstVideoFrameDecoded(_, let uid), .remoteFirstAudioFrameDecoded(_, let uid):
            run(.remoteFirstFrame(uid: uid))
        case .remoteLeft(_, let uid, _):
            run(.remoteLeftChannel(uid: uid))
        default:
            break
        }
    }

    /// Handles one input under the lock and performs its actions outside it (a send may deliver at once and
    /// come back here, in which case that input waits its turn).
    private func run(_ input: LegacyInput) {
        let first = core.withLock { core -> Bool in
            core.pending.append(input)
            guard !core.draining else { return false }
            core.draining = true
            return true
        }
        guard first else { return }
        while let actions = next() {
            for action in actions { perform(action) }
        }
    }

    /// The actions of the next waiting input, or nil when none is left.
    private func next() -> [LegacyAction]? {
        core.withLock { core -> [LegacyAction]? in
            guard !core.pending.isEmpty else {
                core.draining = false
                return nil
            }
            return core.machine.handle(core.pending.removeFirst(), now: clock.nowMillis())
        }
    }

    private func perform(_ action: LegacyAction) {
        switch action {
        case .send(let object, let to):
            let text = (try? JSONEncoder().encode(object)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
            client.sendMessage(userId: String(to), message: text, completion: nil)
        case .joinRTC(let room, let type):
            engine.joinChannel(room, token: "legacy", uid: userId, media: .call(type))
        case .leaveRTC:
            engine.leaveChannel()
        case .startRingTimer(let generation, let millis):
            guard millis > 0 else { return }
            let timer = clock.schedule(afterMillis: millis) { [weak self] in
                self?.run(.ringTimerFired(generation: generation))
            }
            core.withLock {
                $0.timer?.cancel()
                $0.timer = timer
            }
        case .stopRingTimer:
            core.withLock {
                $0.timer?.cancel()
                $0.timer = nil
            }
        case .report(let state, let reason):
            core.withLock { $0.changes.append(StateChange(state: state, reason: reason)) }
        }
    }
}

extension MessageAction {
    /// The actions of wire format 1.0, which the deployed clients know.
    fileprivate var isLegacy: Bool { self != .ack && self != .keepAlive }
}
