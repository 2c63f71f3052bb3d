/// What kind of failure ``CallApiListenerProtocol/onCallError(with:errorType:errorCode:message:)`` reports.
public enum CallErrorEvent: Int, Sendable, CaseIterable {
    case normalError = 0
    case rtcOccurError = 100
    case startCaptureFail = 110
    case sendMessageFail = 210
}

/// Which subsystem an error code comes from.
public enum CallErrorCodeType: Int, Sendable, CaseIterable {
    case normal = 0
    case rtc = 1
    case message = 2
}
