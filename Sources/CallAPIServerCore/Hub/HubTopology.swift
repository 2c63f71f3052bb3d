/// Whether a hub is the whole service or one node of a cluster sharing a PostgreSQL database (docs/scale-out.md).
package enum HubTopology: Sendable, Equatable {
    /// The only node: every session is here.
    case single
    /// The node named `id`: the hub reports its sessions to the cluster link and relays to the other nodes' users
    /// through it.
    case node(String)
}
