import CallAPISignalProtocol

/// What the channel state asks its shell to do.
package enum ChannelAction: Sendable, Equatable {
    /// Write `frame` to the connection.
    case send(SessionID, ChannelServerFrame)
    /// Check the token, then report ``ChannelEvent/tokenChecked(_:purpose:result:)``.
    case verifyToken(SessionID, token: String, purpose: ChannelTokenPurpose)
    /// Close the connection's socket with `code` (a `joinFailed` or `removed` frame has been sent before, except
    /// after `leave`). The state has already forgotten the connection.
    case close(SessionID, code: UInt16)
    /// A member joined or left: log it, count it, post it to the webhook.
    case report(ChannelNotice)
    /// In a cluster: claim `channel` for this node (or learn which node holds it), then report
    /// ``ChannelEvent/homeFound(_:channel:_:)``. Claims and releases are performed in the order they are asked for.
    case claimHome(SessionID, channel: String)
    /// In a cluster: this node's last member of `channel` left; give up its claim.
    case releaseHome(channel: String)
}
