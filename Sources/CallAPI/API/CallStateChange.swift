/// One state change, as delivered by ``CallApiImpl/stateChanges``.
public struct CallStateChange: Sendable, Equatable {
    public var state: CallStateType
    public var reason: CallStateReason
    /// A short text about the cause, as in ``CallApiListenerProtocol/onCallStateChanged(with:stateReason:eventReason:eventInfo:)``.
    public var eventReason: String
    /// The event info, keys as in ``CallApiListenerProtocol/onCallStateChanged(with:stateReason:eventReason:eventInfo:)``.
    ///
    /// Built when read (each read builds it again): the state machine hands over what it is made from, so
    /// that a state change nobody reads costs no dictionary.
    public var eventInfo: [String: JSONValue] {
        get { info.dictionary }
        set { info = EventInfo(newValue) }
    }
    /// What ``eventInfo`` is built from.
    package private(set) var info: EventInfo

    public init(state: CallStateType, reason: CallStateReason, eventReason: String, eventInfo: [String: JSONValue]) {
        self.init(state: state, reason: reason, eventReason: eventReason, info: EventInfo(eventInfo))
    }

    package init(state: CallStateType, reason: CallStateReason, eventReason: String, info: EventInfo) {
        self.state = state
        self.reason = reason
        self.eventReason = eventReason
        self.info = info
    }

    /// Equal when the state, the reason and the event info are.
    public static func == (lhs: CallStateChange, rhs: CallStateChange) -> Bool {
        lhs.state == rhs.state && lhs.reason == rhs.reason && lhs.eventReason == rhs.eventReason
            && lhs.eventInfo == rhs.eventInfo
    }
}
