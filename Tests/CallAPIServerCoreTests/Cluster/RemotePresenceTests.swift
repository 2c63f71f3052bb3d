import Testing

@testable import CallAPIServerCore

/// Presence across nodes: a user is online while it has a session on any node, and a change of the other nodes'
/// view is told only for users whose state changed (docs/scale-out.md).
@Suite struct RemotePresenceTests {
    @Test func theViewIsBuiltFromRowsByUserInNodeOrderWithoutEmptyRows() {
        let view = RemotePresence(
            rows: [("b", "1001", [SessionID(4)]), ("a", "1001", [SessionID(9), SessionID(2)]), ("c", "1002", [])])
        #expect(
            view.nodes(of: "1001") == [
                .init(node: "a", ids: [SessionID(2), SessionID(9)]), .init(node: "b", ids: [SessionID(4)]),
            ])
        #expect(view.nodes(of: "1001").map(\.sessions) == [2, 1])
        #expect(view.nodes(of: "1002").isEmpty && !view.isOnline("1002"))
    }

    @Test func aUserOnAnotherNodeIsOnlineAndItsLocalLoginOrLogoutChangesNothing() {
        var presence = Presence()
        let changes = presence.replaceRemote(with: RemotePresence(counts: [("b", "1001", 1)]))
        #expect(changes.map(\.userId) == ["1001"] && changes.map(\.online) == [true])
        #expect(presence.isOnline("1001") && presence.sessions(of: "1001").isEmpty)
        let cameOnline = presence.loggedIn(SessionID(1), as: "1001")
        #expect(!cameOnline)
        let wentOffline = presence.loggedOut(SessionID(1), as: "1001")
        #expect(!wentOffline)
        #expect(presence.onlineUsers == ["1001"] && presence.onlineUserCount == 0)
    }

    @Test func replacingTheViewTellsOnlyTheUsersWhoseStateChanged() {
        var presence = Presence()
        _ = presence.loggedIn(SessionID(1), as: "1003")
        _ = presence.replaceRemote(with: RemotePresence(counts: [("b", "1001", 1), ("b", "1003", 1)]))
        let changes = presence.replaceRemote(
            with: RemotePresence(counts: [("c", "1001", 1), ("b", "1002", 2)]))
        // 1001 moved from b to c (still online), 1003 is online here anyway: only 1002 changed.
        #expect(changes.map(\.userId) == ["1002"])
        let gone = presence.replaceRemote(with: RemotePresence())
        #expect(gone.map(\.userId) == ["1001", "1002"] && gone.allSatisfy { !$0.online })
        #expect(presence.onlineUsers == ["1003"])
    }
}
