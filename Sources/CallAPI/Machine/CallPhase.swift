extension CallStateMachine {
    /// What an endpoint is doing. Each case owns what exists only while the endpoint does it, so no
    /// combination the spec does not allow can be written down.
    package enum Phase: Sendable {
        /// Before `initialize`, or after `deinitialize`.
        case uninitialized
        /// Initialized, not yet prepared (reported as idle).
        case initialized(userId: UInt)
        /// Ready to place or receive a call; with `PrepareConfig.preJoinsCallRoom`, the room of the next call
        /// placed, joined (or tried) ahead of it (nil: not tried since the last prepare or call).
        case prepared(Endpoint, preJoined: PreJoinedRoom?)
        /// In a call: ringing, connecting or connected.
        case inCall(Endpoint, Call)
        /// The last call failed to join its media channel; `prepareForCall` leaves this.
        case failed(Endpoint)
    }

    /// A prepared endpoint: its user and the prepare config.
    package struct Endpoint: Sendable {
        package let userId: UInt
        package var config: PrepareConfig
    }
}
