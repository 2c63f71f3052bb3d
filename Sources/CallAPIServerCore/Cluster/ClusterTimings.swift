/// How often a node of a cluster beats, reads and sweeps, in milliseconds (docs/scale-out.md).
package struct ClusterTimings: Sendable, Equatable {
    /// Between two heartbeats (each also sweeps the nodes found dead).
    package var heartbeatMillis: Int64 = 1_000
    /// A node whose heartbeat is older than this is dead: its sessions leave presence, its mailbox is handed on.
    /// A node that has not saved its own heartbeat for this long must register again before it delivers anything.
    package var deadAfterMillis: Int64 = 3_000
    /// Between two reads of the mailbox when no notification woke the node (a notification missed costs this much
    /// latency, never a message).
    package var pollMillis: Int64 = 250
    /// Between two reads of the other nodes' sessions.
    package var presenceMillis: Int64 = 1_000
    /// After a failed registration, before the next.
    package var retryMillis: Int64 = 500
    /// How long the calls in progress of a node that died or left wait for the node one of their users reconnects
    /// to, before any node takes them over: twice the dead limit, time for a client to find another node.
    package var callTakeoverGraceMillis: Int64 { 2 * deadAfterMillis }
    /// How long a call this node records may have no session of its participants here, while one is on another node,
    /// before it is handed to such a node (whose ledger hears them now).
    package var callHandOffMillis: Int64 = 1_000

    package init() {}
}
