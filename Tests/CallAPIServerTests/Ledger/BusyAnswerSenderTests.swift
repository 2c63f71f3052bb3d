import CallAPISignalProtocol
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// The server's busy answer (the ledger answering a call on a busy callee's behalf) is given only to a sender that
/// may send: the same checks as a relayed `send`.
@Suite struct BusyAnswerSenderTests {
    var hub = HubState(limits: HubLimits())
    let caller = SessionID(1)
    let call = ClientFrame.Send(id: 7, to: "2002", body: "{\"message_action\":0}")
    let busyReject = "{\"message_action\":3}"

    init() {
        _ = hub.handle(.connected(caller), now: 0)
        _ = hub.handle(.frame(caller, .login(.init(id: 1, token: "t"))), now: 0)
        _ = hub.handle(
            .tokenChecked(
                caller, requestId: 1, purpose: .login, result: .valid(userId: "1001", expiresAt: 60_000)), now: 0)
    }

    func frames(_ actions: [HubAction]) -> [ServerFrame] {
        actions.compactMap { if case .send(caller, let frame) = $0 { frame } else { nil } }
    }

    @Test mutating func aSenderWithALiveTokenGetsTheBusyRejectAsAMessageFromTheCallee() {
        let actions = hub.handle(.answeredOnBehalf(caller, call, body: busyReject), now: 59_999)
        let sent = frames(actions)
        #expect(sent.contains { if case .answer(let answer) = $0 { answer.result == .delivered } else { false } })
        #expect(
            sent.contains {
                if case .message(let message) = $0 {
                    message.from == "2002" && message.body == busyReject
                } else {
                    false
                }
            })
    }

    @Test mutating func aSenderWhoseTokenExpiredIsRefusedAndClosedInsteadOfAnswered() {
        let actions = hub.handle(.answeredOnBehalf(caller, call, body: busyReject), now: 60_000)
        let sent = frames(actions)
        #expect(
            sent.contains {
                if case .answer(let answer) = $0 {
                    answer.result == .failed && answer.reason == .tokenExpired
                } else {
                    false
                }
            })
        #expect(!sent.contains { if case .message = $0 { true } else { false } })
        #expect(actions.contains(.close(caller, code: SignalCloseCode.tokenExpired, reason: .tokenExpired)))
    }

    @Test mutating func aSessionThatNeverLoggedInIsToldToLogInFirst() {
        let stranger = SessionID(9)
        _ = hub.handle(.connected(stranger), now: 0)
        let actions = hub.handle(.answeredOnBehalf(stranger, call, body: busyReject), now: 1)
        let answers: [ServerFrame.Answer] = actions.compactMap {
            if case .send(stranger, .answer(let answer)) = $0 { answer } else { nil }
        }
        #expect(answers.map(\.reason) == [.notLoggedIn])
        #expect(!actions.contains { if case .send(stranger, .message) = $0 { true } else { false } })
    }
}
