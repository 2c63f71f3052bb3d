import CallAPI

/// What a chaos scenario does: how many endpoints, how many random actions, and how bad the network is.
public struct ChaosConfiguration: Sendable {
    /// Endpoints (users 1...n); 3 lets busy and third-party forgeries happen.
    public var endpoints = 3
    /// Each user has between 1 and this many devices (logged in at once), drawn from the seed.
    public var maxDevicesPerUser = 1
    /// Random user actions per scenario.
    public var actions = 12
    /// Probability that a message is lost.
    public var loss = 0.2
    /// Probability that a message is delivered twice.
    public var duplication = 0.1
    /// Probability that a message is held back so that later ones overtake it.
    public var reorder = 0.2
    /// One-way signaling latency.
    public var latencyMillis: Int64 = 20
    /// The longest extra delay of a reordered message.
    public var maxReorderDelayMillis: Int64 = 400
    /// The longest pause between two actions.
    public var maxPauseMillis: Int64 = 4_000
    /// Probability per action of cutting the path between two endpoints (healed at random later).
    public var partition = 0.05
    /// Probability per action of an endpoint's process dying (it restarts at random later).
    public var crash = 0.04
    /// Probability per action of a forged or a stale message being injected.
    public var forgery = 0.1
    /// The ring timeout of every endpoint.
    public var ringTimeoutMillis: UInt64 = 8_000
    /// How long the network is left to settle, faults off, before the invariants are checked.
    public var settleMillis: Int64 = 60_000
    public var reliability = CallReliability.standard
    /// Legacy endpoints (deployed-client stand-ins, flavours taken in turn from ``legacyFlavours``) added
    /// after ours; ours call them and they call ours.
    public var legacyEndpoints = 0
    public var legacyFlavours: [LegacyFlavour] = LegacyFlavour.allCases

    public init() {}
}

/// What one scenario showed.
public struct ChaosOutcome: Sendable {
    public var seed: UInt64
    /// Broken invariants; empty when the scenario passed.
    public var violations: [String]
    /// What happened, in order: actions, faults, messages. Printed with a failing seed.
    public var trace: [String]
    public var messagesSent: Int
    public var callsConnected: Int
    /// Calls in which a legacy endpoint reached connected.
    public var legacyCallsConnected = 0

    /// The seed, the violations and the trace, for a failing run.
    public var report: String {
        (["seed \(seed): \(violations.count) violation(s)"] + violations.map { "  ✗ \($0)" } + ["trace:"]
            + trace.map { "  \($0)" }).joined(separator: "\n")
    }
}
