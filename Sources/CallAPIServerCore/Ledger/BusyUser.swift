/// A user in an accepted call, with the call and the other user in it: what a node of a cluster tells the others so
/// that any node can answer busy on the user's behalf (docs/scale-out.md).
package struct BusyUser: Sendable, Equatable, Hashable {
    package var user: String
    package var callId: String
    package var peer: String

    package init(user: String, callId: String, peer: String) {
        self.user = user
        self.callId = callId
        self.peer = peer
    }
}
