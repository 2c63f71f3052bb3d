@_spi(ServerShell) import CallAPIServerCore

/// Where a node of a cluster claims its RTC channels (``ChannelAction/claimHome(_:channel:)``); the cluster link
/// is one.
protocol ChannelHomeKeeper: Sendable {
    /// Claims `channel` for this node after every claim and release asked before; `found` is called once, with
    /// the answer.
    func claim(_ channel: String, found: @escaping @Sendable (ChannelHome) -> Void)
    /// Gives up this node's claim of `channel`, after every claim and release asked before.
    func release(_ channel: String)
}
