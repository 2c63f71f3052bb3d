/// Where a channel's members meet in a cluster: on one node, the channel's home (docs/scale-out.md, "RTC channels").
/// The first node a member joins a channel on claims it; a join that reaches another node is sent there.
package enum ChannelHome: Sendable, Equatable {
    /// This node: it holds the channel's claim.
    case here
    /// Another live node holds the claim; `url` is the address it advertises, if it advertises one.
    case elsewhere(node: String, url: String?)
    /// The cluster could not be asked (its database is down, or this node is not a member now): the member is let in
    /// here, as on a single server.
    case unknown(reason: String)
}

/// Whether a server's channels are its own, or each lives on one node of a cluster.
package enum ChannelTopology: Sendable, Equatable {
    /// A single server: every channel is here.
    case single
    /// A node of a cluster: a channel's first join claims it for this node (``ChannelHome``).
    case cluster
}
