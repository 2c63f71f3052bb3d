import CallAPI
import CallAPISystemCall
import Foundation

/// A system call screen in memory, for tests: it shows what the bridge reported, lets a test act as the user
/// (answer, decline, hang up, mute) and as PushKit (deliver a VoIP push), and keeps the platform's rules,
/// recording every break of them in ``violations``:
/// - a VoIP push must be reported as an incoming call before its handler returns;
/// - each system action is completed (fulfilled or failed) exactly once;
/// - only reported calls are updated or ended.
///
/// Like CallKit, it answers a request to end or answer a call with the matching action. Everything runs
/// synchronously on the caller's thread.
public final class SimulatedSystemCallScreen: SystemCallScreen {
    /// Where a call on the screen stands.
    public enum Status: Sendable, Equatable {
        /// An incoming call rings.
        case ringing
        /// An outgoing call rings at the peer.
        case dialing
        /// The callee accepted an outgoing call; media is being set up.
        case connecting
        /// Answered (incoming) or connected (outgoing).
        case active
        /// Over: with the reason reported, or nil when ended on the screen (or at the app's request).
        case ended(SystemCallEndReason?)
    }

    /// A call on the screen.
    public struct Call: Sendable, Equatable {
        public var report: SystemCallReport
        public var status: Status
        public var muted = false
        public var isOutgoing: Bool
    }

    /// What the bridge did to the screen, in order.
    public enum Event: Sendable, Equatable {
        case reportedIncoming(UUID)
        /// An incoming call reported again with the UUID of one already shown: the system refuses it
        /// (`callUUIDAlreadyExists`) and shows nothing new.
        case alreadyReported(UUID)
        case reportedOutgoing(UUID)
        case outgoingConnecting(UUID)
        case outgoingConnected(UUID)
        case ended(UUID, SystemCallEndReason)
        case endRequested(UUID)
        case answerRequested(UUID)
        case completed(SystemCallActionKind, UUID, fulfilled: Bool)
    }

    private struct PendingAction: Hashable, Sendable {
        var kind: SystemCallActionKind
        var uuid: UUID
    }

    private struct State: Sendable {
        weak var bridge: SystemCallBridge?
        var calls: [UUID: Call] = [:]
        var order: [UUID] = []
        var events: [Event] = []
        var violations: [String] = []
        var pending: Set<PendingAction> = []
        var requestedMute: [UUID: Bool] = [:]
    }

    private let state = Locked(State())

    public init() {}

    /// Connects the screen to the bridge that drives it (held weakly: the bridge holds the screen).
    public func attach(_ bridge: SystemCallBridge) {
        state.withLock { $0.bridge = bridge }
    }

    // MARK: - What the screen shows

    /// Every call ever reported, in order.
    public var calls: [Call] { state.withLock { state in state.order.compactMap { state.calls[$0] } } }
    /// The call `uuid`, if it was reported.
    public func call(_ uuid: UUID) -> Call? { state.withLock { $0.calls[uuid] } }
    /// Calls not ended.
    public var liveCalls: [Call] {
        calls.filter { if case .ended = $0.status { false } else { true } }
    }
    public var events: [Event] { state.withLock { $0.events } }
    /// Breaks of the platform's rules; empty when the bridge behaved.
    public var violations: [String] { state.withLock { $0.violations } }
    /// System actions not yet completed.
    public var pendingActionCount: Int { state.withLock { $0.pending.count } }

    // MARK: - PushKit

    /// Delivers a VoIP push to the bridge, as PushKit does, and checks that an incoming call was reported
    /// before the handler returned.
    public func deliverVoIPPush(payload: [AnyHashable: Any]) {
        let (bridge, before) = state.withLock { ($0.bridge, $0.events.count) }
        guard let bridge else {
            state.withLock { $0.violations.append("a VoIP push was delivered with no bridge attached") }
            return
        }
        bridge.pushReceived(payload: payload)
        state.withLock { state in
            let reported = state.events[before...].contains { event in
                switch event {
                case .reportedIncoming, .alreadyReported: true
                default: false
                }
            }
            if !reported { state.violations.append("a VoIP push was not reported before its handler returned") }
        }
    }

    /// Delivers `push` as a VoIP push.
    public func deliverVoIPPush(_ push: SystemCallPush) {
        let data = Data(push.payloadJSON().utf8)
        let payload = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        deliverVoIPPush(payload: payload)
    }

    // MARK: - The user

    /// The user answers `uuid`.
    public func answer(_ uuid: UUID) { perform(.answer, on: uuid) { $0.systemAnswered(uuid: uuid) } }

    /// The user declines (ringing) or hangs up (otherwise) `uuid`.
    public func end(_ uuid: UUID) { perform(.end, on: uuid) { $0.systemEnded(uuid: uuid) } }

    /// The user mutes or unmutes `uuid`.
    public func setMuted(_ uuid: UUID, _ muted: Bool) {
        state.withLock { $0.requestedMute[uuid] = muted }
        perform(.mute, on: uuid) { $0.systemSetMuted(uuid: uuid, muted: muted) }
    }

    private func perform(_ kind: SystemCallActionKind, on uuid: UUID, _ body: (SystemCallBridge) -> Void) {
        let bridge = state.withLock { state -> SystemCallBridge? in
            state.pending.insert(PendingAction(kind: kind, uuid: uuid))
            return state.bridge
        }
        if let bridge { body(bridge) }
    }

    // MARK: - SystemCallScreen

    public func reportIncomingCall(_ call: SystemCallReport) {
        state.withLock { state in
            guard state.calls[call.uuid] == nil else {
                state.events.append(.alreadyReported(call.uuid))
                return
            }
            state.calls[call.uuid] = Call(report: call, status: .ringing, isOutgoing: false)
            state.order.append(call.uuid)
            state.events.append(.reportedIncoming(call.uuid))
        }
    }

    public func reportOutgoingCallStarted(_ call: SystemCallReport) {
        state.withLock { state in
            guard state.calls[call.uuid] == nil else {
                state.violations.append("outgoing call \(call.uuid) started twice")
                return
            }
            state.calls[call.uuid] = Call(report: call, status: .dialing, isOutgoing: true)
            state.order.append(call.uuid)
            state.events.append(.reportedOutgoing(call.uuid))
        }
    }

    public func reportOutgoingCallConnecting(uuid: UUID) {
        update(uuid, .outgoingConnecting(uuid)) { $0.status = .connecting }
    }

    public func reportOutgoingCallConnected(uuid: UUID) {
        update(uuid, .outgoingConnected(uuid)) { $0.status = .active }
    }

    public func reportCallEnded(uuid: UUID, reason: SystemCallEndReason) {
        update(uuid, .ended(uuid, reason)) { call in
            if case .ended = call.status { return }
            call.status = .ended(reason)
        }
    }

    public func requestEndCall(uuid: UUID) {
        update(uuid, .endRequested(uuid)) { _ in }
        end(uuid)
    }

    public func requestAnswerCall(uuid: UUID) {
        update(uuid, .answerRequested(uuid)) { _ in }
        answer(uuid)
    }

    public func completeAction(_ kind: SystemCallActionKind, uuid: UUID, fulfilled: Bool) {
        state.withLock { state in
            state.events.append(.completed(kind, uuid, fulfilled: fulfilled))
            guard state.pending.remove(PendingAction(kind: kind, uuid: uuid)) != nil else {
                state.violations.append("\(kind) action on \(uuid) completed but none was pending")
                return
            }
            guard var call = state.calls[uuid] else { return }
            switch (kind, fulfilled) {
            case (.answer, true):
                call.status = .active
            case (.answer, false):
                // A failed answer ends the call on the screen.
                if case .ended = call.status {} else { call.status = .ended(.failed) }
            case (.end, _):
                if case .ended = call.status {} else { call.status = .ended(nil) }
            case (.mute, true):
                call.muted = state.requestedMute[uuid] ?? call.muted
            case (.mute, false):
                break
            }
            state.calls[uuid] = call
        }
    }

    private func update(_ uuid: UUID, _ event: Event, _ change: (inout Call) -> Void) {
        state.withLock { state in
            state.events.append(event)
            guard var call = state.calls[uuid] else {
                state.violations.append("\(event) for a call never reported")
                return
            }
            change(&call)
            state.calls[uuid] = call
        }
    }
}
