package extension HubState {
    /// One connection to the signaling endpoint.
    typealias Session = Sessions<Phase, RelayedMessage>.Session

    /// Where a session is in its life.
    enum Phase: Sendable, Equatable {
        /// Connected; no login yet (or the last one was refused).
        case awaitingLogin
        /// A `login`'s token is being checked; the push device the session says it runs on, if it said.
        case verifyingLogin(deviceId: String?)
        /// Logged in.
        case loggedIn(Login)
    }

    /// A logged-in session: its user and its token's lease (whether it hears of presence changes is
    /// ``HubState``'s list of subscribers).
    struct Login: Sendable, Equatable {
        var userId: String
        var lease: TokenLease
        /// The push device the session runs on, when its `login` named one (docs/push.md).
        var deviceId: String?
    }

    /// A relayed message in a session's outbox: whom to tell if it is never written.
    struct RelayedMessage: Sendable, Equatable {
        var from: String
        var to: String
        var messageId: String
    }
}

extension Sessions.Session where Phase == HubState.Phase {
    /// The session's login, once it has one.
    // Out of line: inlined where a session is read through an optional, the release build's ownership verifier
    // crashed (Swift 6.3.1, "Found outside of lifetime use") once `Login` held the device id.
    var login: HubState.Login? {
        @inline(never) get {
            if case .loggedIn(let login) = phase { login } else { nil }
        }
    }
}
