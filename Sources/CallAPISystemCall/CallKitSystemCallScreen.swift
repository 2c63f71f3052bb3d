// The CallKit and PushKit binding. Apple platforms only, so it is not compiled on Linux: it holds no logic,
// only one-to-one calls between the platform and the bridge (everything that decides is in
// SystemCallBridgeMachine, which the tests drive through SimulatedSystemCallScreen).
#if canImport(CallKit) && canImport(PushKit)
    @preconcurrency import CallKit
    import Foundation
    @preconcurrency import PushKit

    /// CallKit as the bridge's system call screen, and PushKit's VoIP pushes fed to the bridge.
    ///
    /// ```swift
    /// let screen = CallKitSystemCallScreen(configuration: CXProviderConfiguration())
    /// let bridge = SystemCallBridge(callAPI: api, engine: engine, screen: screen)
    /// screen.attach(bridge) { token in registerWithServer(token) }
    /// ```
    // @unchecked: the only mutable state (bridge, pending actions, token handler) is behind `state`'s lock;
    // CXProvider, CXCallController and PKPushRegistry may be called from any thread.
    public final class CallKitSystemCallScreen: NSObject, SystemCallScreen, CXProviderDelegate,
        PKPushRegistryDelegate, @unchecked Sendable
    {
        private struct State {
            weak var bridge: SystemCallBridge?
            var pending: [String: CXCallAction] = [:]
            var onVoIPToken: (@Sendable (Data) -> Void)?
        }

        private let state = Locked(State())
        private let provider: CXProvider
        private let controller = CXCallController()
        private let registry = PKPushRegistry(queue: DispatchQueue(label: "callapi.voip-push"))

        public init(configuration: CXProviderConfiguration) {
            provider = CXProvider(configuration: configuration)
            super.init()
            provider.setDelegate(self, queue: nil)
        }

        /// Starts receiving VoIP pushes for `bridge`; `onVoIPToken` gets the device's VoIP token to register
        /// with the server (and again whenever it changes).
        public func attach(_ bridge: SystemCallBridge, onVoIPToken: @escaping @Sendable (Data) -> Void) {
            state.withLock {
                $0.bridge = bridge
                $0.onVoIPToken = onVoIPToken
            }
            registry.delegate = self
            registry.desiredPushTypes = [.voIP]
        }

        private var bridge: SystemCallBridge? { state.withLock { $0.bridge } }

        // MARK: - SystemCallScreen

        public func reportIncomingCall(_ call: SystemCallReport) {
            provider.reportNewIncomingCall(with: call.uuid, update: update(for: call)) { [weak self] error in
                // Do Not Disturb or a block list refused it: the call is declined. An existing UUID is no error.
                guard let error = error as? CXErrorCodeIncomingCallError, error.code != .callUUIDAlreadyExists
                else { return }
                self?.bridge?.systemEnded(uuid: call.uuid)
            }
        }

        public func reportOutgoingCallStarted(_ call: SystemCallReport) {
            let start = CXStartCallAction(call: call.uuid, handle: handle(of: call))
            start.isVideo = call.video
            controller.request(CXTransaction(action: start)) { _ in }
        }

        public func reportOutgoingCallConnecting(uuid: UUID) {
            provider.reportOutgoingCall(with: uuid, startedConnectingAt: nil)
        }

        public func reportOutgoingCallConnected(uuid: UUID) {
            provider.reportOutgoingCall(with: uuid, connectedAt: nil)
        }

        public func reportCallEnded(uuid: UUID, reason: SystemCallEndReason) {
            let ended: CXCallEndedReason =
                switch reason {
                case .remoteEnded: .remoteEnded
                case .unanswered: .unanswered
                case .declinedElsewhere: .declinedElsewhere
                case .answeredElsewhere: .answeredElsewhere
                case .failed: .failed
                }
            provider.reportCall(with: uuid, endedAt: nil, reason: ended)
        }

        public func requestEndCall(uuid: UUID) {
            controller.request(CXTransaction(action: CXEndCallAction(call: uuid))) { _ in }
        }

        public func requestAnswerCall(uuid: UUID) {
            controller.request(CXTransaction(action: CXAnswerCallAction(call: uuid))) { _ in }
        }

        public func completeAction(_ kind: SystemCallActionKind, uuid: UUID, fulfilled: Bool) {
            guard let action = state.withLock({ $0.pending.removeValue(forKey: key(kind, uuid)) }) else { return }
            if fulfilled { action.fulfill() } else { action.fail() }
        }

        // MARK: - CXProviderDelegate

        public func providerDidReset(_ provider: CXProvider) {}

        public func provider(_ provider: CXProvider, perform action: CXStartCallAction) {
            action.fulfill()  // CallAPI placed the call already; this only records it with the system
        }

        public func provider(_ provider: CXProvider, perform action: CXAnswerCallAction) {
            hold(action, as: .answer)
            bridge?.systemAnswered(uuid: action.callUUID)
        }

        public func provider(_ provider: CXProvider, perform action: CXEndCallAction) {
            hold(action, as: .end)
            bridge?.systemEnded(uuid: action.callUUID)
        }

        public func provider(_ provider: CXProvider, perform action: CXSetMutedCallAction) {
            hold(action, as: .mute)
            bridge?.systemSetMuted(uuid: action.callUUID, muted: action.isMuted)
        }

        private func hold(_ action: CXCallAction, as kind: SystemCallActionKind) {
            state.withLock { $0.pending[key(kind, action.callUUID)] = action }
        }

        // MARK: - PKPushRegistryDelegate

        public func pushRegistry(
            _ registry: PKPushRegistry, didUpdate pushCredentials: PKPushCredentials, for type: PKPushType
        ) {
            state.withLock { $0.onVoIPToken }?(pushCredentials.token)
        }

        public func pushRegistry(
            _ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType,
            completion: @escaping () -> Void
        ) {
            // Returns only once the call was reported to CallKit, as iOS requires of every VoIP push.
            bridge?.pushReceived(payload: payload.dictionaryRepresentation)
            completion()
        }

        // MARK: - Helpers

        private func update(for call: SystemCallReport) -> CXCallUpdate {
            let update = CXCallUpdate()
            update.remoteHandle = handle(of: call)
            update.localizedCallerName = call.displayName
            update.hasVideo = call.video
            update.supportsHolding = false
            update.supportsGrouping = false
            update.supportsUngrouping = false
            update.supportsDTMF = false
            return update
        }

        private func handle(of call: SystemCallReport) -> CXHandle {
            CXHandle(type: .generic, value: String(call.remoteUserId))
        }

        private func key(_ kind: SystemCallActionKind, _ uuid: UUID) -> String { "\(kind) \(uuid)" }
    }
#endif
