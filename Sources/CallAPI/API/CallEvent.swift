/// Fine-grained events reported through ``CallApiListenerProtocol/onCallEventChanged(with:eventReason:)``.
/// Raw values are those of the existing CallAPI clients.
public enum CallEvent: Int, Sendable, CaseIterable {
    case none = 0
    case deinitialize = 1
    case callingTimeout = 3
    case remoteCallingTimeout = 4
    case joinRTCSuccessed = 5
    case stateMismatch = 9
    case joinRTCStart = 10
    case remoteUserRecvCall = 99
    case localRejected = 100
    case remoteRejected = 101
    case remoteAccepted = 103
    case localAccepted = 104
    case localHangup = 105
    case remoteHangup = 106
    case remoteJoined = 107
    case remoteLeft = 108
    case localCancelled = 109
    case remoteCancelled = 110
    case localJoined = 111
    case localLeft = 112
    case recvRemoteFirstFrame = 113
    case remoteCallBusy = 117
    case captureFirstLocalVideoFrame = 119
    case publishFirstLocalVideoFrame = 120
    case publishFirstLocalAudioFrame = 130
    case localVideoCall = 140
    case localAudioCall = 141
    case remoteVideoCall = 142
    case remoteAudioCall = 143
    /// Ours: the peer stopped answering; the call ended with ``CallStateReason/peerLost``.
    case peerLost = 150
    /// Ours: another device of this user accepted the call; see ``CallStateReason/answeredElsewhere``.
    case answeredElsewhere = 151
    /// Ours: another device of this user rejected the call; see ``CallStateReason/rejectedElsewhere``.
    case rejectedElsewhere = 152
    /// Ours: the peer's media stopped arriving (the network path broke) and the engine is looking for another path
    /// (an ICE restart). The call stays in its state; show "reconnecting". It ends only by the usual rules.
    case mediaReconnecting = 153
    /// Ours: the peer's media arrives again after ``mediaReconnecting``; the event reason is the gap in milliseconds.
    case mediaReconnected = 154
}
