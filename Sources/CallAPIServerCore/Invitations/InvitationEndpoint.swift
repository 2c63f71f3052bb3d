/// One of an invitation's sessions as the node that arbitrates it sees it: a session of its own, or, in a cluster, a
/// session of the callee on another node, reached through that node (docs/invitations.md, "In a cluster").
package enum InvitationEndpoint: Sendable, Hashable, Comparable {
    /// A session on this node.
    case local(SessionID)
    /// Session `session` of `user` on the node named `node` (its ids are that node's; the user is checked there,
    /// since a node restarted under the same name numbers its sessions afresh).
    case remote(node: String, user: String, session: SessionID)

    package static func < (lhs: InvitationEndpoint, rhs: InvitationEndpoint) -> Bool {
        switch (lhs, rhs) {
        case (.local(let a), .local(let b)): a < b
        case (.local, .remote): true
        case (.remote, .local): false
        case (.remote(let n, let u, let a), .remote(let m, let v, let b)): (n, u, a.number) < (m, v, b.number)
        }
    }

    /// Whether this is a session of `user` on `node`.
    func isRemote(node: String, user: String) -> Bool {
        guard case .remote(node, user, _) = self else { return false }
        return true
    }
}
