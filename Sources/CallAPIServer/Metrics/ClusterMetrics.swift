import Metrics

/// A cluster node's own gauges and counters on `/metrics` (docs/scale-out.md, "Operating it"): whether it is a
/// member, how many users and sessions it sees on the other nodes, what waits to be written, how often its listener connected,
/// and writes that failed.
struct ClusterMetrics: Sendable {
    /// 1 while the node is a member of the cluster, 0 while it is joining.
    let member: Metrics.Gauge
    /// Users online on other nodes, as the last presence read found them.
    let remoteUsers: Metrics.Gauge
    /// Their sessions on the other nodes, as the last presence read found them.
    let remoteSessions: Metrics.Gauge
    /// Messages for other nodes waiting for the writer.
    let pendingEnvelopes: Metrics.Gauge
    /// Times the notification listener started listening (1, plus one per reconnect).
    let listens: Metrics.Counter
    /// Cluster writes that failed (forwards, parked messages, device lists, placed calls, presence).
    let writeFailures: Metrics.Counter
    /// Messages from other nodes delivered from their notification, before the read that deletes their rows.
    let notifiedDeliveries: Metrics.Counter

    init(factory: any MetricsFactory) {
        member = Metrics.Gauge(label: "callapi_cluster_member", factory: factory)
        remoteUsers = Metrics.Gauge(label: "callapi_cluster_remote_users", factory: factory)
        remoteSessions = Metrics.Gauge(label: "callapi_cluster_remote_sessions", factory: factory)
        pendingEnvelopes = Metrics.Gauge(label: "callapi_cluster_pending_envelopes", factory: factory)
        listens = Metrics.Counter(label: "callapi_cluster_listens_total", factory: factory)
        writeFailures = Metrics.Counter(label: "callapi_cluster_write_failures_total", factory: factory)
        notifiedDeliveries = Metrics.Counter(label: "callapi_cluster_notified_deliveries_total", factory: factory)
    }
}
