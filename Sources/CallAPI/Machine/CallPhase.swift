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
    ///
    /// A value, kept in one shared box: the phase is copied on every input that reads it, and a copy of the
    /// config (strings, views, a closure, the user extension) was most of that cost. Changing the config
    /// (a token renewal) copies the box first when it is shared.
    package struct Endpoint: Sendable {
        private final class Storage: Sendable {
            let userId: UInt
            let config: PrepareConfig

            init(userId: UInt, config: PrepareConfig) {
                self.userId = userId
                self.config = config
            }
        }

        private var storage: Storage

        package init(userId: UInt, config: PrepareConfig) {
            storage = Storage(userId: userId, config: config)
        }

        package var userId: UInt { storage.userId }

        package var config: PrepareConfig {
            get { storage.config }
            set { storage = Storage(userId: storage.userId, config: newValue) }
        }
    }
}
