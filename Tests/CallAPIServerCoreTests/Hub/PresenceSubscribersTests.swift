import CallAPISignalProtocol
import Testing

@testable import CallAPIServerCore

/// Session ids kept in order on their own, and the hub's presence subscribers: in id order, whatever the order they
/// subscribed in.
@Suite struct PresenceSubscribersTests {
    @Test func sortedSessionIDsStayInIdOrderWithoutRepeats() {
        var subscribers = SortedSessionIDs()
        for id in [5, 2, 9, 2, 7, 11] { subscribers.insert(SessionID(UInt64(id))) }
        #expect(subscribers.ids == [2, 5, 7, 9, 11].map { SessionID(UInt64($0)) })
        subscribers.remove(SessionID(5))
        subscribers.remove(SessionID(4))
        #expect(Array(subscribers) == [2, 7, 9, 11].map { SessionID(UInt64($0)) })
        #expect(subscribers.contains(SessionID(7)) && !subscribers.contains(SessionID(5)))
    }

    @Test func aLoginReachesOnlySubscribersInIdOrderAndAClosedSubscriberHearsNothingMore() {
        var hub = HubState(limits: HubLimits())
        func login(_ id: UInt64, _ user: String) -> [HubAction] {
            let session = SessionID(id)
            _ = hub.handle(.connected(session), now: 0)
            _ = hub.handle(.frame(session, .login(.init(id: 1, token: "t"))), now: 0)
            return hub.handle(
                .tokenChecked(
                    session, requestId: 1, purpose: .login, result: .valid(userId: user, expiresAt: 9_999_999)),
                now: 0)
        }
        func told(_ actions: [HubAction]) -> [SessionID] {
            actions.compactMap { if case .send(let id, .presenceChanged) = $0 { id } else { nil } }
        }
        _ = login(3, "1003")
        _ = login(1, "1001")
        _ = login(2, "1002")
        for id: UInt64 in [3, 1] { _ = hub.handle(.frame(SessionID(id), .subscribe(.init(id: 2))), now: 0) }
        #expect(told(login(4, "1004")) == [SessionID(1), SessionID(3)])
        _ = hub.handle(.disconnected(SessionID(1)), now: 0)
        _ = hub.handle(.frame(SessionID(3), .unsubscribe(.init(id: 3))), now: 0)
        _ = hub.handle(.frame(SessionID(2), .subscribe(.init(id: 4))), now: 0)
        #expect(told(login(5, "1005")) == [SessionID(2)])
    }
}
