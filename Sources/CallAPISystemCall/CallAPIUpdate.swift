import CallAPI

/// What the bridge needs to know of a CallAPI state change.
package enum CallAPIUpdate: Sendable, Equatable {
    /// A call from `callerId` rings here.
    case ringing(callId: String, callerId: UInt, video: Bool, callerName: String?)
    /// This user placed a call to `calleeId`.
    case placed(callId: String, calleeId: UInt, video: Bool)
    /// Both sides accepted; media is being set up.
    case connecting(callId: String?)
    case connected(callId: String?)
    /// The call is over. `callId` is nil when CallAPI did not say which (the current one).
    case ended(callId: String?, CallEnding)

    /// Reads a state change as listeners get it; nil for changes that concern no call (`prepared` after
    /// `prepareForCall`).
    package init?(state: CallStateType, reason: CallStateReason, eventInfo: [String: Any]) {
        let callId = eventInfo[kCallId] as? String
        switch state {
        case .calling:
            guard let callId else { return nil }
            switch reason {
            case .remoteVideoCall, .remoteAudioCall:
                guard let caller = eventInfo[kFromUserId] as? UInt else { return nil }
                let ext = eventInfo[kFromUserExtension] as? [String: Any]
                self = .ringing(
                    callId: callId, callerId: caller, video: reason == .remoteVideoCall,
                    callerName: ext?[SystemCallPush.callerNameExtensionKey] as? String)
            case .localVideoCall, .localAudioCall:
                guard let callee = eventInfo[kRemoteUserId] as? UInt else { return nil }
                self = .placed(callId: callId, calleeId: callee, video: reason == .localVideoCall)
            default:
                return nil
            }
        case .connecting:
            self = .connecting(callId: callId)
        case .connected:
            self = .connected(callId: callId)
        case .prepared where reason == .none:
            return nil
        case .prepared, .failed, .idle:
            self = .ended(callId: callId, CallEnding(reason))
        }
    }
}

/// How a call ended, from the bridge's point of view: by this user, or for one of the reasons the system call
/// screen distinguishes.
///
/// `answeredElsewhere` and `declinedElsewhere` come from the server's tombstone of a pushed call (see
/// ``SystemCallWithdrawal``) and from CallAPI's multi-device endings (`CallStateReason.answeredElsewhere` and
/// `.rejectedElsewhere`, docs/multi-device.md) through ``init(_:)``.
package enum CallEnding: Sendable, Equatable {
    /// This user hung up, cancelled or declined in the app (or through the system screen).
    case local
    case remote(SystemCallEndReason)

    package init(_ reason: CallStateReason) {
        switch reason {
        case .localHangup, .localCancelled, .localRejected, .none:
            self = .local
        case .remoteHangup, .remoteCancelled, .remoteRejected, .remoteCallBusy, .cancelByCallerRecall:
            self = .remote(.remoteEnded)
        case .callingTimeout, .remoteCallingTimeout:
            self = .remote(.unanswered)
        case .answeredElsewhere:
            self = .remote(.answeredElsewhere)
        case .rejectedElsewhere:
            self = .remote(.declinedElsewhere)
        case .joinRTCFailed, .messageFailed, .peerLost:
            self = .remote(.failed)
        case .remoteAccepted, .localAccepted, .recvRemoteFirstFrame, .localVideoCall, .localAudioCall,
            .remoteVideoCall, .remoteAudioCall:
            // Not endings; a call that leaves the call states with one of these is lost.
            self = .remote(.failed)
        }
    }
}
