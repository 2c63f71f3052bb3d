/// A server-placed call (`POST /v1/calls` or a match, docs/match.md) whose caller is on another node: the node that took the
/// order hands it to the caller's node, which tells the caller's session to place it there (docs/scale-out.md).
package struct ForwardedPlacement: Sendable, Equatable {
    /// The caller's node.
    package var node: String
    package var order: PlaceCallOrder
    package var callId: String
    /// Set when the match queue paired the two (its caller entered the queue on that node).
    package var match: ForwardedMatch?

    package init(node: String, order: PlaceCallOrder, callId: String, match: ForwardedMatch? = nil) {
        self.node = node
        self.order = order
        self.callId = callId
        self.match = match
    }
}
