/// How long a session's token stands, for both endpoints: the token expires at a time, the session is told a while
/// before, a renewal may be checked meanwhile, and at the expiry the session ends.
///
/// A pure value that a machine keeps in its logged-in (or member) phase and drives with `now`; it returns what is
/// due and the machine turns that into its own frames and closes.
package struct TokenLease: Sendable, Equatable {
    /// When the token expires (ms since 1970 on the server's clock).
    package private(set) var expiresAt: Int64
    package private(set) var notice: Notice = .pending
    package private(set) var renewal: Renewal = .none

    /// Whether the expiry notice went out. Independent of ``Renewal``: a renewal may start before or after it.
    package enum Notice: Sendable, Equatable {
        case pending
        case sent
    }

    /// Whether a renewal's token is being checked.
    package enum Renewal: Sendable, Equatable {
        case none
        case checking
    }

    /// What the lease needs done at a given time.
    package enum Due: Sendable, Equatable {
        /// The token expired: end the session.
        case expiry
        /// Tell the session its token expires at ``TokenLease/expiresAt``.
        case notice
    }

    package init(expiresAt: Int64) {
        self.expiresAt = expiresAt
    }

    /// Whether the token has expired at `now`.
    package func isExpired(at now: Int64) -> Bool { now >= expiresAt }

    /// What is due at `now` with a notice `noticeMillis` before the expiry: the expiry, the notice (once; the
    /// lease remembers it went out), or nothing.
    package mutating func due(now: Int64, noticeMillis: Int64) -> Due? {
        if isExpired(at: now) { return .expiry }
        guard notice == .pending, now >= expiresAt - noticeMillis else { return nil }
        notice = .sent
        return .notice
    }

    /// When ``due(now:noticeMillis:)`` next has something to return: the notice's time while it is pending, then
    /// the expiry.
    package func nextDue(noticeMillis: Int64) -> Int64 {
        notice == .pending ? expiresAt - noticeMillis : expiresAt
    }

    /// Starts checking a renewal's token. Returns false, changing nothing, when one is already being checked.
    package mutating func startRenewal() -> Bool {
        guard renewal == .none else { return false }
        renewal = .checking
        return true
    }

    /// The renewal's token was refused: the current token stands.
    package mutating func renewalRefused() {
        renewal = .none
    }

    /// The renewal's token was accepted: it stands until `newExpiry`, with its own notice to come.
    package mutating func renewed(until newExpiry: Int64) {
        expiresAt = newExpiry
        notice = .pending
        renewal = .none
    }
}
