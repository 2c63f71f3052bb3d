import CallAPISignalProtocol
import Testing

@testable import CallAPIServerCore

/// The hub visits its sessions in ascending id order whatever order they connected in: the tick and a shutdown from
/// an index kept as sessions come and go (not by sorting them all each time), a presence change by sorting only the
/// subscribers.
@Suite struct HubSessionOrderTests {
    static func closed(_ actions: [HubAction]) -> [SessionID] {
        actions.compactMap { if case .close(let id, _, _) = $0 { id } else { nil } }
    }

    @Test func theTickClosesSessionsThatNeverLoggedInInIdOrderWhateverOrderTheyConnectedIn() {
        var hub = HubState(limits: HubLimits())
        let connected = [5, 2, 9, 1, 7, 3].map { SessionID(UInt64($0)) }
        for id in connected { _ = hub.handle(.connected(id), now: 0) }
        // Two leave before the login timeout; the rest are closed by it, smallest id first.
        _ = hub.handle(.disconnected(SessionID(9)), now: 1)
        _ = hub.handle(.disconnected(SessionID(2)), now: 1)
        let actions = hub.handle(.tick, now: HubLimits().loginTimeoutMillis)
        #expect(Self.closed(actions) == [1, 3, 5, 7].map { SessionID(UInt64($0)) })
    }

    @Test func aShutdownClosesEverySessionInIdOrder() {
        var hub = HubState(limits: HubLimits())
        for number in [4, 8, 6, 2] as [UInt64] { _ = hub.handle(.connected(SessionID(number)), now: 0) }
        _ = hub.handle(.disconnected(SessionID(6)), now: 1)
        _ = hub.handle(.connected(SessionID(3)), now: 1)
        let actions = hub.handle(.shutdown, now: 2)
        #expect(Self.closed(actions) == [2, 3, 4, 8].map { SessionID(UInt64($0)) })
    }

    @Test func aPresenceChangeReachesTheSubscribersInIdOrder() {
        var hub = HubState(limits: HubLimits())
        func login(_ number: UInt64, _ user: String) {
            let id = SessionID(number)
            _ = hub.handle(.connected(id), now: 0)
            _ = hub.handle(.frame(id, .login(.init(id: 1, token: "t"))), now: 0)
            _ = hub.handle(
                .tokenChecked(id, requestId: 1, purpose: .login, result: .valid(userId: user, expiresAt: 3_600_000)),
                now: 0)
        }
        for (number, user) in [(30, "a"), (10, "b"), (20, "c"), (40, "d")] as [(UInt64, String)] {
            login(number, user)
        }
        for number in [40, 10, 30] as [UInt64] {
            _ = hub.handle(.frame(SessionID(number), .subscribe(.init(id: 2))), now: 0)
        }
        let actions = hub.handle(.disconnected(SessionID(20)), now: 1)
        let told = actions.compactMap { action -> SessionID? in
            if case .send(let id, .presenceChanged(let change)) = action, change.userId == "c", !change.online {
                id
            } else {
                nil
            }
        }
        #expect(told == [10, 30, 40].map { SessionID(UInt64($0)) })
    }
}
