/// A WebSocket endpoint's pure state machine as the server's endpoint shell runs it: ``HubState`` (`/v1/signal`)
/// and ``ChannelState`` (`/v1/rtc`).
///
/// It names only what the shell does the same way for both: it feeds the machine events, collects the actions in
/// a buffer it reuses, and checks the tokens the machine asks about off its lock. Every other action is the
/// endpoint's own to perform.
package protocol SessionMachine: Sendable {
    associatedtype Event: SessionEvent
    associatedtype Action: Sendable
    /// What the machine needs back with a token's verdict (the session, what the token is for, …).
    associatedtype TokenCheckContext: Sendable
    /// The verdict on a token's signature and claims.
    associatedtype TokenVerdict: Sendable
    /// What the machine's gauges show (sessions, queues, …).
    associatedtype Gauges: Equatable & Sendable

    /// The gauges now; the shell publishes them when the metrics are read.
    var gauges: Gauges { get }

    /// Applies `event`, which happened at `now` (ms since 1970 on the server's clock), appending what to do to
    /// `actions` (a buffer the caller may reuse). The event is consumed: its payload (a relayed body) moves into
    /// the state across the module boundary instead of being copied.
    mutating func handle(_ event: consuming Event, now: Int64, into actions: inout [Action])

    /// The event that reports `verdict` on the token checked for `context`.
    static func tokenChecked(_ context: TokenCheckContext, verdict: TokenVerdict) -> Event
}
