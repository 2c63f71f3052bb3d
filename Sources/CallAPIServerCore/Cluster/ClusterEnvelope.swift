import CallAPISignalProtocol

/// A relayed message on its way between two nodes of a cluster: a row of the mailbox (docs/scale-out.md), written by
/// the sender's node and read by the node that holds the receiver's sessions.
package struct ClusterEnvelope: Sendable, Equatable {
    /// The node meant to deliver it.
    package var node: String
    /// The user whose sessions get it.
    package var userId: String
    package var from: String
    package var body: MessageBody
    package var sentAt: Int64
    package var messageId: String
    /// When this is a copy of a message to the sender's own other sessions: whom the message itself went to.
    package var copyOf: String?
    /// Whether it was held for its receiver while they were offline (the frame says so, as a held message's does).
    package var held: Bool
    /// Only for the receiver's sessions on this push device: a call pushed to a sleeping device that woke and logged
    /// in to another node than the one keeping the call (docs/push.md).
    package var device: String?
    /// The sender's answer to a call, or its withdrawal, when the message carried one: the node keeping the call's
    /// pushes to the callee's sleeping devices settles them when it reads it.
    package var settles: PushMark?

    package init(
        node: String, userId: String, from: String, body: MessageBody, sentAt: Int64, messageId: String,
        copyOf: String? = nil, held: Bool = false, device: String? = nil, settles: PushMark? = nil
    ) {
        self.held = held
        self.device = device
        self.settles = settles
        self.node = node
        self.userId = userId
        self.from = from
        self.body = body
        self.sentAt = sentAt
        self.messageId = messageId
        self.copyOf = copyOf
    }

    /// The frame its receiver's sessions get.
    package var frame: ServerFrame {
        .message(
            .init(
                from: from, relayBody: body, sentAt: sentAt, messageId: messageId, held: held ? true : nil, to: copyOf))
    }
}
