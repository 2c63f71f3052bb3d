@_spi(ServerShell) import CallAPIServerCore
import CallAPISignalProtocol
import Logging
import NIOCore
import Testing

@testable import CallAPIServer

/// What the endpoint shell asks of both machines through ``SessionMachine``: the events it builds itself, and
/// the token checks it runs off its lock (named by each endpoint's performer) and reports back.
@Suite struct SessionMachineTests {
    let now: Int64 = 1_800_000_000_000

    /// Handles `events` in order as the shell does, through the protocol alone; the token checks asked for (as
    /// `tokenCheck` reads them from an action) are answered with `verdict` at once. Returns the tokens checked and
    /// every other action.
    func run<Machine: SessionMachine>(
        _ machine: inout Machine, _ events: [Machine.Event], verdict: Machine.TokenVerdict,
        tokenCheck: (Machine.Action) -> (token: String, context: Machine.TokenCheckContext)?
    ) -> (tokens: [String], actions: [Machine.Action]) {
        var tokens: [String] = []
        var performed: [Machine.Action] = []
        var pending = events
        while !pending.isEmpty {
            var actions: [Machine.Action] = []
            machine.handle(pending.removeFirst(), now: now, into: &actions)
            for action in actions {
                if let check = tokenCheck(action) {
                    tokens.append(check.token)
                    pending.append(Machine.tokenChecked(check.context, verdict: verdict))
                } else {
                    performed.append(action)
                }
            }
        }
        return (tokens, performed)
    }

    @Test func aLoginsTokenIsCheckedAndItsVerdictReachesTheHub() {
        var hub = HubState(limits: HubLimits())
        let id = SessionID(1)
        let (tokens, actions) = run(
            &hub, [.connected(id), .frame(id, .login(.init(id: 7, token: "t-alice")))],
            verdict: .valid(userId: "alice", expiresAt: now + 3_600_000)
        ) { action in
            guard case .verifyToken(let id, let requestId, let token, let purpose) = action else { return nil }
            return (token, (id, requestId, purpose))
        }
        #expect(tokens == ["t-alice"])
        #expect(hub.userId(of: id) == "alice")
        #expect(
            actions.contains {
                if case .send(id, .welcome(let welcome)) = $0 { welcome.userId == "alice" } else { false }
            })
        #expect(!actions.contains { if case .verifyToken = $0 { true } else { false } })
    }

    @Test func aJoinsTokenIsCheckedAndItsVerdictReachesTheChannels() {
        var channels = ChannelState(limits: ChannelLimits())
        let id = SessionID(1)
        let (tokens, actions) = run(
            &channels, [.connected(id), .frame(id, .join(.init(channel: "room", uid: 1001, token: "t-room")))],
            verdict: .valid(userId: "1001", channel: "room", expiresAt: now + 3_600_000, issuedAt: now)
        ) { action in
            guard case .verifyToken(let id, let token, let purpose) = action else { return nil }
            return (token, (id, purpose))
        }
        #expect(tokens == ["t-room"])
        #expect(channels.members(of: "room") == [1001])
        #expect(actions.contains { if case .send(id, .joined) = $0 { true } else { false } })
    }

    @Test func theEventsTheShellBuildsAreTheMachinesOwnCases() {
        let id = SessionID(3)
        #expect({ if case .binary(id) = HubState.Event.binary(id) { true } else { false } }())
        #expect({ if case .written(id, 2) = ChannelState.Event.written(id, frames: 2) { true } else { false } }())
        #expect({ if case .tick = HubState.Event.tick { true } else { false } }())
        #expect({ if case .shutdown = ChannelState.Event.shutdown { true } else { false } }())
    }

    @Test func eachPerformerHandsOnlyTheTokenChecksToTheShell() async throws {
        let authority = try await TokenAuthority.make(key: .hs256(secret: String(repeating: "k", count: 32)))
        let logger = Logger(label: "test")
        let id = SessionID(3)
        let hub = SignalHubPerformer(
            authority: authority, clock: SystemServerClock(), metrics: ServerMetrics(), logger: logger, ledger: nil,
            push: nil, cluster: nil)
        var hubCore = EndpointCore(state: HubState(limits: HubLimits()))
        let hubClose = hub.perform(.close(id, code: 1000, reason: .tooLarge), in: &hubCore, relayStartedAt: nil)
        #expect(hubClose == nil)
        let hubCheck = hub.perform(
            .verifyToken(id, requestId: 4, token: "t", purpose: .renew), in: &hubCore, relayStartedAt: nil)
        guard case .tokenCheck("t", let context) = hubCheck else {
            Issue.record("the hub's token check was not handed to the shell: \(String(describing: hubCheck))")
            return
        }
        #expect(context.session == id && context.requestId == 4 && context.purpose == .renew)

        let channels = ChannelHubPerformer(
            authority: authority, metrics: ServerMetrics(), webhook: nil, homes: nil, logger: logger)
        var channelCore = EndpointCore(state: ChannelState(limits: ChannelLimits()))
        let channelClose = channels.perform(.close(id, code: 1000), in: &channelCore, relayStartedAt: nil)
        #expect(channelClose == nil)
        let channelCheck = channels.perform(
            .verifyToken(id, token: "u", purpose: .join), in: &channelCore, relayStartedAt: nil)
        guard case .tokenCheck("u", let channelContext) = channelCheck else {
            Issue.record("the channel's token check was not handed to the shell")
            return
        }
        #expect(channelContext.connection == id && channelContext.purpose == .join)
    }
}
