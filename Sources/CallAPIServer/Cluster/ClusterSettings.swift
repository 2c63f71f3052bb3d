import CallAPIServerCore

/// One node of a cluster of servers sharing a PostgreSQL database (docs/scale-out.md). Nodes started with the same
/// database and each its own node id form one service: any client may connect to any node.
public struct ClusterSettings: Sendable, Equatable {
    /// This node's name in the cluster: 1-32 characters of a-z 0-9 _, unique among the nodes.
    public var nodeId: String
    /// The cluster's database, `postgres://user[:password]@host[:port]/database`.
    public var databaseURL: String
    /// How often the node beats, reads and sweeps; declared once, in ``ClusterTimings``, with its defaults.
    var timings = ClusterTimings()
    /// Between two heartbeats, in milliseconds.
    public var heartbeatMillis: Int64 {
        get { timings.heartbeatMillis }
        set { timings.heartbeatMillis = newValue }
    }
    /// A node whose heartbeat is older than this is dead, in milliseconds.
    public var deadAfterMillis: Int64 {
        get { timings.deadAfterMillis }
        set { timings.deadAfterMillis = newValue }
    }
    /// Between two reads of the mailbox when no notification came, in milliseconds.
    public var pollMillis: Int64 {
        get { timings.pollMillis }
        set { timings.pollMillis = newValue }
    }
    /// Between two reads of the other nodes' sessions, in milliseconds.
    public var presenceMillis: Int64 {
        get { timings.presenceMillis }
        set { timings.presenceMillis = newValue }
    }
    /// How long a message waits in the mailbox for a receiver who has no session on any node, in seconds.
    public var mailboxSeconds: Int = 60
    /// Envelopes waiting to be written to the mailbox, at most; a send over it is answered `server_busy`.
    public var maxPendingEnvelopes: Int = 10_000
    /// The address clients reach this node at (`ws(s)://host:port`), given to a client whose RTC channel join
    /// reached another node while the channel's members meet here (docs/scale-out.md). `nil`: clients reach the
    /// nodes only through a proxy that sends a channel's members to one node.
    public var advertisedURL: String?

    public init(nodeId: String, databaseURL: String) {
        self.nodeId = nodeId
        self.databaseURL = databaseURL
    }

    /// Why `url` cannot be a node's advertised address, or `nil` when it can.
    public static func problem(advertisedURL url: String) -> String? {
        let schemes = ["ws://", "wss://", "http://", "https://"]
        guard schemes.contains(where: { url.hasPrefix($0) }), url.count <= 200, !url.contains(" ") else {
            return "an advertised address is ws://, wss://, http:// or https:// and a host, not \"\(url)\""
        }
        return nil
    }

    /// Why `nodeId` cannot name a node, or `nil` when it can. (It becomes part of a notification channel's name.)
    public static func problem(nodeId: String) -> String? {
        let allowed = nodeId.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F }
        guard (1...32).contains(nodeId.utf8.count), allowed else {
            return "a node id is 1-32 characters of a-z 0-9 _, not \"\(nodeId)\""
        }
        return nil
    }
}
