import CallAPI
import CallAPITesting
import Foundation
import Testing

extension CallHarness {
    /// The prepare config the harness gave `user`, changed by `change`, applied again with `prepareForCall`.
    func reprepare(_ user: UInt, _ change: (inout PrepareConfig) -> Void) {
        var config = PrepareConfig(
            roomId: self[user].roomId, rtcToken: "token-\(user)", localView: self[user].localView,
            remoteView: self[user].remoteView)
        change(&config)
        let probe = self[user].api.probe { $0.prepareForCall(prepareConfig: config, completion: $1) }
        precondition(probe.succeeded, "prepareForCall failed: \(probe.errorMessage ?? "no completion")")
        self[user].listener.reset()
    }

    /// Every call-flow message sent so far from `from` to `to`, decoded, in order (the reliability layer's
    /// acknowledgements and keep-alives left out).
    func messages(from: UInt, to: UInt) -> [CallMessage] {
        network.sentMessages.filter { $0.from == from && $0.to == to }.compactMap {
            try? CallMessage.decode($0.text).message
        }.filter { $0.action != .ack && $0.action != .keepAlive }
    }

    /// Puts `user` (and its peer) into `situation`; returns (actor, peer). The callee situation acts as user 2.
    /// `connecting` needs a harness whose first frames take time (see ``CallHarness/situations``).
    @discardableResult
    func reach(_ situation: MachineDriver.Situation, type: CallType = .video) -> (actor: UInt, peer: UInt) {
        switch situation {
        case .idleUninitialized:
            _ = self[1].api.probe { api, done in api.deinitialize { done(nil) } }
        case .idleInitialized:
            _ = self[1].api.probe { api, done in api.deinitialize { done(nil) } }
            self[1].api.initialize(
                config: CallConfig(
                    appId: "test", userId: 1, rtcEngine: self[1].engine, signalClient: network.client(userId: 1),
                    clock: clock))
        case .prepared:
            break
        case .callingAsCaller, .callingAsCallee, .connecting, .connectingAsCallee:
            _ = self[1].api.probe { $0.call(remoteUserId: 2, callType: type, callExtension: [:], completion: $1) }
            if situation.state == .connecting {
                _ = self[2].api.probe { $0.accept(remoteUserId: 1, completion: $1) }
            }
        case .connected, .connectedAsCallee:
            _ = self[1].api.probe { $0.call(remoteUserId: 2, callType: type, callExtension: [:], completion: $1) }
            _ = self[2].api.probe { $0.accept(remoteUserId: 1, completion: $1) }
            if self[1].api.state != .connected { clock.advance(byMillis: 1_000) }
        case .failed:
            world.failNextJoin(userId: 1)
            _ = self[1].api.probe { $0.call(remoteUserId: 2, callType: type, callExtension: [:], completion: $1) }
        }
        let actor: UInt = situation.isCallee ? 2 : 1
        precondition(
            self[actor].api.state == situation.state, "could not reach \(situation): \(self[actor].api.state)")
        for endpoint in endpoints.values { endpoint.listener.reset() }
        return (actor, actor == 1 ? 2 : 1)
    }

    /// A harness in which first frames take a while, so `connecting` lasts until the clock moves.
    static func situations(timeout: UInt64 = 0) -> CallHarness {
        CallHarness(
            timing: .init(firstFrameLatencyMillis: 1_000),
            prepare: PrepareConfig(callTimeoutMillisecond: timeout))
    }
}

extension RecordingCallListener {
    /// The state changes, as (state, reason) pairs.
    var stateReasons: [StateReason] {
        stateRecords.map { StateReason($0.state, $0.reason) }
    }

    /// How many `.disconnected` records.
    var disconnectCount: Int { records.filter { if case .disconnected = $0 { true } else { false } }.count }
    var connectCount: Int { records.filter { if case .connected = $0 { true } else { false } }.count }
}

/// A (state, reason) pair, comparable in `#expect`.
struct StateReason: Equatable, CustomStringConvertible {
    var state: CallStateType
    var reason: CallStateReason
    init(_ state: CallStateType, _ reason: CallStateReason) {
        self.state = state
        self.reason = reason
    }
    var description: String { "\(state)(\(reason))" }
}

/// Parses a JSON text to a Foundation object, to look at raw keys and types.
func jsonObject(_ text: String) -> [String: Any]? {
    (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
}
