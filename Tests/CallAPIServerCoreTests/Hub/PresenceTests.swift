import Testing

@testable import CallAPIServerCore

/// The hub's nested presence: who is online by their logged-in sessions, and who hears of it.
@Suite struct PresenceTests {
    @Test func aUserComesOnlineWithItsFirstSessionAndGoesOfflineWithItsLast() {
        var presence = Presence()
        let change1 = presence.loggedIn(SessionID(1), as: "1001")
        #expect(change1)
        let change2 = presence.loggedIn(SessionID(2), as: "1001")
        #expect(!change2)
        let change3 = presence.loggedIn(SessionID(3), as: "1002")
        #expect(change3)
        #expect(presence.sessions(of: "1001") == [SessionID(1), SessionID(2)])
        #expect(presence.onlineUsers == ["1001", "1002"])
        #expect(presence.onlineUserCount == 2 && presence.loggedInSessionCount == 3)

        let change4 = presence.loggedOut(SessionID(1), as: "1001")

        #expect(!change4)
        #expect(presence.sessions(of: "1001") == [SessionID(2)])
        let change5 = presence.loggedOut(SessionID(2), as: "1001")
        #expect(change5)
        #expect(!presence.isOnline("1001") && presence.sessions(of: "1001").isEmpty)
        #expect(presence.onlineUsers == ["1002"] && presence.loggedInSessionCount == 1)
    }

    @Test func subscribersAreKeptInIdOrderUntilTheyUnsubscribe() {
        var presence = Presence()
        for id: UInt64 in [7, 3, 5] { presence.subscribe(SessionID(id)) }
        presence.subscribe(SessionID(3))
        #expect(Array(presence.subscribers) == [3, 5, 7].map { SessionID($0) })
        presence.unsubscribe(SessionID(5))
        presence.unsubscribe(SessionID(9))
        #expect(Array(presence.subscribers) == [3, 7].map { SessionID($0) })
    }
}
