package extension HubState {
    /// One connection to the signaling endpoint.
    struct Session: Sendable, Equatable {
        /// When it connected: the login timeout runs from here.
        var connectedAt: Int64
        var lastSeen: Int64
        var bucket: TokenBucket
        var phase: Phase = .awaitingLogin
        /// What its writer has not written yet.
        var outbox = OutboxLedger<RelayedMessage>()
        /// Frames refused for the rate limit since the last one admitted.
        var refusedInARow = 0

        /// The session's login, once it has one.
        var login: Login? {
            if case .loggedIn(let login) = phase { login } else { nil }
        }

        /// Counts a frame received at `now` against the rate limit: how many frames in a row it has refused, this
        /// one included (0: admitted).
        mutating func admitFrame(now: Int64, ratePerSecond: Double, burst: Int) -> Int {
            lastSeen = now
            refusedInARow = bucket.take(now: now, ratePerSecond: ratePerSecond, burst: burst) ? 0 : refusedInARow + 1
            return refusedInARow
        }
    }

    /// Where a session is in its life.
    enum Phase: Sendable, Equatable {
        /// Connected; no login yet (or the last one was refused).
        case awaitingLogin
        /// A `login`'s token is being checked.
        case verifyingLogin
        /// Logged in.
        case loggedIn(Login)
    }

    /// A logged-in session: its user and its token's lease (whether it hears of presence changes is
    /// ``HubState``'s list of subscribers).
    struct Login: Sendable, Equatable {
        var userId: String
        var lease: TokenLease
    }
}
