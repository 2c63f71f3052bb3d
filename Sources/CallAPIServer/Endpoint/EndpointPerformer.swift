@_spi(ServerShell) import CallAPIServerCore
import NIOCore

/// What one endpoint does with its machine's actions, beside what ``EndpointShell`` does the same way for every
/// endpoint (connections, the write tally, token checks, closes with their grace period).
protocol EndpointPerformer: Sendable {
    associatedtype Machine: SessionMachine
    /// An action's work that awaits, or must otherwise wait until the lock is released.
    associatedtype AwaitedWork

    /// Performs `action` under the shell's lock, in the order the state decided it; returns what must wait for the
    /// lock's release (the machine's token checks among it). `relayStartedAt` is when the message that led to the
    /// action was read, if one did.
    func perform(
        _ action: consuming Machine.Action, in core: inout EndpointCore<Machine>, relayStartedAt: NIODeadline?
    ) -> EndpointDeferred<Machine, AwaitedWork>?

    /// Starts `work` once the lock is released; what it learns comes back through `shell`.
    func start(_ work: AwaitedWork, in shell: EndpointShell<Self>)

    /// Checks a token's signature and claims (an ``EndpointDeferred/tokenCheck(token:context:)``).
    func checkToken(_ token: String) async -> Machine.TokenVerdict

    /// Records the endpoint's gauges (when the metrics are read, see ``EndpointShell/publishGauges()``).
    func publish(_ gauges: Machine.Gauges)
}

/// What one action leaves to do once the shell's lock is released: a token check, which the shell runs the same
/// way for every endpoint, or the endpoint's own awaited work.
///
/// The performer names token checks in its own `switch` over the action rather than the shell asking the machine
/// about each action first: that look cost a copy of every action (see `scripts/callgrind_relay.sh`).
enum EndpointDeferred<Machine: SessionMachine, Work> {
    case tokenCheck(token: String, context: Machine.TokenCheckContext)
    case work(Work)
}
