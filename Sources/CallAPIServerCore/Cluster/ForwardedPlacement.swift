/// A server-placed call (`POST /v1/calls`, docs/match.md) whose caller is on another node: the node that took the
/// order hands it to the caller's node, which tells the caller's session to place it there (docs/scale-out.md).
package struct ForwardedPlacement: Sendable, Equatable {
    /// The caller's node.
    package var node: String
    package var order: PlaceCallOrder
    package var callId: String

    package init(node: String, order: PlaceCallOrder, callId: String) {
        self.node = node
        self.order = order
        self.callId = callId
    }
}
