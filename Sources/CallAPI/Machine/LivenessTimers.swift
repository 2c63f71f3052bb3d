/// Which of a call's liveness timers are running: a set of bits, since they are all the current call's
/// (a `Set<CallTimerID>` allocated its table on the first timer of every call).
struct LivenessTimers: OptionSet, Sendable, Equatable {
    let rawValue: UInt8

    static let keepAlive = LivenessTimers(rawValue: 1 << 0)
    static let peerSilence = LivenessTimers(rawValue: 1 << 1)
    static let remoteLeftGrace = LivenessTimers(rawValue: 1 << 2)
    static let remoteQuitGrace = LivenessTimers(rawValue: 1 << 3)

    /// The liveness timer `timer` is, whatever its call; nil for the other timers.
    init?(_ timer: CallTimerID) {
        switch timer {
        case .keepAlive: self = .keepAlive
        case .peerSilence: self = .peerSilence
        case .remoteLeftGrace: self = .remoteLeftGrace
        case .remoteQuitGrace: self = .remoteQuitGrace
        case .ring, .retry, .ownDeviceNotice: return nil
        }
    }

    init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Stops each of these timers of `callId`, in the order a call's liveness timers are stopped when it ends.
    func appendStops(of callId: String, to actions: inout [CallAction]) {
        if contains(.keepAlive) { actions.append(.stopTimer(.keepAlive(callId: callId))) }
        if contains(.peerSilence) { actions.append(.stopTimer(.peerSilence(callId: callId))) }
        if contains(.remoteLeftGrace) { actions.append(.stopTimer(.remoteLeftGrace(callId: callId))) }
        if contains(.remoteQuitGrace) { actions.append(.stopTimer(.remoteQuitGrace(callId: callId))) }
    }
}
