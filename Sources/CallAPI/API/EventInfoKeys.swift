// Keys of the `eventInfo` dictionaries, as the existing CallAPI clients name them.

/// The caller's user id (`UInt`).
public let kFromUserId = "fromUserId"
/// The RTC channel of the call (`String`).
public let kFromRoomId = "fromRoomId"
/// The callee's user id (`UInt`).
public let kRemoteUserId = "remoteUserId"
/// The sender's user extension (`[String: Any]`).
public let kFromUserExtension = "fromUserExtension"
/// The reason given with a reject (`String`).
public let kRejectReason = "rejectReason"
/// The text a client sends when it rejects by itself because it is busy. Apps match on it; it never changes.
public let kRejectReasonCallBusy = "The user is currently busy"
/// The reason given with a hangup (`String`).
public let kHangupReason = "hangupReason"
/// `1` when the callee's client rejected by itself (busy), else `0`.
public let kRejectByInternal = "rejectByInternal"
/// `1` when the caller's ring timer cancelled the call, else `0`.
public let kCancelCallByInternal = "cancelCallByInternal"
/// The cost map (`[String: Int]`, milliseconds from the call's start on this side) in the connected event info.
public let kCostTimeMap = "costTimeMap"
/// The user whose action caused the state change (`UInt`).
public let kPublisher = "publisher"
/// The call's identifier (`String`).
public let kCallId = "callId"
