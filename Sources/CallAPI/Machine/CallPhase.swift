extension CallStateMachine {
    /// What an endpoint is doing. Each case owns what exists only while the endpoint does it, so no
    /// combination the spec does not allow can be written down.
    package enum Phase: Sendable {
        /// Before `initialize`, or after `deinitialize`.
        case uninitialized
        /// Initialized, not yet prepared (reported as idle).
        case initialized(userId: UInt)
        /// Ready to place or receive a call.
        case prepared(Endpoint)
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
