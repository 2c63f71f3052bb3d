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

extension CallStateMachine.Phase {
    /// Changes the call in place, when in one, and returns what `change` returns (nil outside a call).
    ///
    /// Matching `.inCall(let endpoint, var call)` and assigning `.inCall(endpoint, call)` back copied the call
    /// (its bytes through the runtime's tuple witness, every string and table in it retained) and then destroyed
    /// the old one: on every input that touched the call, the machine's largest cost. Moving the phase out first
    /// (a swap leaves `.uninitialized` behind for the moment) lets the match take the call instead of copying it.
    @inline(__always) @discardableResult
    mutating func changeCall<Result>(_ change: (CallStateMachine.Endpoint, inout Call) -> Result) -> Result? {
        guard case .inCall = self else { return nil }
        var taken = Self.uninitialized
        swap(&self, &taken)
        // Listing the other cases rather than binding them: a binding of the whole value made the match copy.
        switch consume taken {
        case .inCall(let endpoint, var call):
            let result = change(endpoint, &call)
            self = .inCall(endpoint, call)
            return result
        case .uninitialized, .initialized, .prepared, .failed:
            return nil  // cannot happen: the phase was a call (checked above)
        }
    }
}

extension CallStateMachine.Phase {
    /// Reads the call where it is, when in one, and returns what `read` returns (nil outside a call).
    ///
    /// Matching `.inCall(_, let call)` on the stored phase copied the call out (its bytes, a retain for each string
    /// and table in it) even to read one field, wherever the optimizer could not prove the copy unneeded; a match
    /// on a borrowed phase reads it in place.
    @inline(__always)
    func readCall<Result>(_ read: (CallStateMachine.Endpoint, Call) -> Result) -> Result? {
        Self.readCall(of: self, read)
    }

    @inline(__always)
    private static func readCall<Result>(
        of phase: borrowing Self, _ read: (CallStateMachine.Endpoint, Call) -> Result
    ) -> Result? {
        switch phase {
        case .inCall(let endpoint, let call): read(endpoint, call)
        case .uninitialized, .initialized, .prepared, .failed: nil
        }
    }
}
