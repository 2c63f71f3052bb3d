/// Why the state changed. Raw values are those of the existing CallAPI clients.
public enum CallStateReason: Int, Sendable, CaseIterable {
    case none = 0
    case joinRTCFailed = 1
    case messageFailed = 4
    case localRejected = 5
    case remoteRejected = 6
    case remoteAccepted = 7
    case localAccepted = 8
    case localHangup = 9
    case remoteHangup = 10
    case localCancelled = 11
    case remoteCancelled = 12
    case recvRemoteFirstFrame = 13
    case callingTimeout = 14
    case cancelByCallerRecall = 15
    case remoteCallBusy = 17
    case remoteCallingTimeout = 18
    case localVideoCall = 30
    case localAudioCall = 31
    case remoteVideoCall = 32
    case remoteAudioCall = 33
    /// Ours: the peer stopped answering (no keep-alives, or it left the RTC channel and did not come back).
    case peerLost = 40
    /// Ours: another device of this user accepted the call that rang here; this device stopped ringing
    /// without telling the caller anything (docs/multi-device.md).
    case answeredElsewhere = 41
    /// Ours: another device of this user rejected the call that rang here (or was busy), which rejects it
    /// for every device of the user.
    case rejectedElsewhere = 42
}
