import CallAPIServer
import CallAPIServerCore
import CallAPISignalProtocol
import Testing

/// What the endpoint shell asks of both machines through ``SessionMachine``: the events it builds itself, and
/// the token checks it runs off its lock and reports back.
@Suite struct SessionMachineTests {
    let now: Int64 = 1_800_000_000_000

    /// Handles `events` in order as the shell does, through the protocol alone; the token checks asked for are
    /// answered with `verdict` at once. Returns the tokens checked and every other action.
    func run<Machine: SessionMachine>(
        _ machine: inout Machine, _ events: [Machine.Event], verdict: Machine.TokenVerdict
    ) -> (tokens: [String], actions: [Machine.Action]) {
        var tokens: [String] = []
        var performed: [Machine.Action] = []
        var pending = events
        while !pending.isEmpty {
            var actions: [Machine.Action] = []
            machine.handle(pending.removeFirst(), now: now, into: &actions)
            for action in actions {
                if let check = Machine.tokenCheck(orderedBy: action) {
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
            verdict: .valid(userId: "alice", expiresAt: now + 3_600_000))
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
            verdict: .valid(userId: "1001", channel: "room", expiresAt: now + 3_600_000))
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

    @Test func onlyATokenCheckIsTakenForOne() {
        let id = SessionID(3)
        #expect(HubState.tokenCheck(orderedBy: .close(id, code: 1000, reason: .tooLarge)) == nil)
        #expect(ChannelState.tokenCheck(orderedBy: .close(id, code: 1000)) == nil)
        let hubCheck = HubState.tokenCheck(orderedBy: .verifyToken(id, requestId: 4, token: "t", purpose: .renew))
        #expect(hubCheck?.token == "t" && hubCheck?.context.requestId == 4 && hubCheck?.context.purpose == .renew)
        let channelCheck = ChannelState.tokenCheck(orderedBy: .verifyToken(id, token: "u", purpose: .join))
        #expect(channelCheck?.token == "u" && channelCheck?.context.connection == id)
    }
}
