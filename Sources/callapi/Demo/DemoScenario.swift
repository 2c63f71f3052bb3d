/// The call stories `callapi demo` can tell.
enum DemoScenario: String, CaseIterable, Sendable {
    /// A video call, accepted, held, hung up by the caller.
    case video
    /// The same as an audio call.
    case audio
    /// The callee rejects.
    case reject
    /// The caller cancels while it rings.
    case cancel
    /// Nobody answers; the ring timer ends it.
    case timeout
    /// A third user calls the callee during the call and gets "busy".
    case busy
    /// The callee is a host live-streaming in a showroom watched by a viewer: while the call is connected
    /// the host stays in the showroom but stops publishing there (the viewer sees the pause), and resumes
    /// when the call ends.
    case showroom
    /// Three users on a real server in this process enter the match queue with tags; the two who share a tag are
    /// matched, the server has the one who waited longer place the call, the other's client accepts it by itself
    /// (docs/match.md). Runs ``MatchDemoRun``, not ``DemoRun``.
    case match
}
