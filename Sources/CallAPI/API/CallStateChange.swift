/// One state change, as delivered by ``CallApiImpl/stateChanges``.
public struct CallStateChange: Sendable, Equatable {
    public var state: CallStateType
    public var reason: CallStateReason
    /// A short text about the cause, as in ``CallApiListenerProtocol/onCallStateChanged(with:stateReason:eventReason:eventInfo:)``.
    public var eventReason: String
    public var eventInfo: [String: JSONValue]

    public init(state: CallStateType, reason: CallStateReason, eventReason: String, eventInfo: [String: JSONValue]) {
        self.state = state
        self.reason = reason
        self.eventReason = eventReason
        self.eventInfo = eventInfo
    }
}
